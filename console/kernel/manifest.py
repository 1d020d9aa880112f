"""A run's manifest as the kernel sees it: what each load read and each save wrote.

The entries travel to the server in one run_manifest message (console/wire/kernel.py) before the
run's end; the server keeps them with the run and checks the delta versions it can against the
lake's own logs. A delta input is named by the version the read opened (taken from the very
table that was read, console/sources/delta.py `watching`), an output by the version its commit
made. A plain file is named by its size, modification time and the sha256 of its first 64 KiB,
enough to tell later whether it changed without reading a large file whole; a folder of files by
its file count, total size, latest modification time and a digest of its listing.
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from console.wire.kernel import MANIFEST_ENTRIES, ManifestEntry

if TYPE_CHECKING:
    from console import lang
    from console.sources import SourceContext

HEAD_BYTES = 64 * 1024
MAX_LISTED = 10_000  # files of a folder the listing digest covers (a bigger folder: the first ones, by name)
_LAKE_NAME = re.compile(r"^(?:([A-Za-z0-9_]+)\.)?([A-Za-z0-9_]+)$")  # as sources/delta.py names lake tables
_LAKE_PATH = re.compile(r"^([A-Za-z0-9_]+)/([A-Za-z0-9_]+)/?$")  # a relative path: under the lake
# Formats whose path names files of the machine (jdbc, jsonStr and csvStr name no file).
FILE_FORMATS = {"parquet", "csv", "json", "text", "excel", "binaryfile"}


class Recorder:
    """The entries of one cell run, capped at what one message carries (the rest are counted)."""

    def __init__(self) -> None:
        self.entries: list[ManifestEntry] = []
        self.dropped = 0
        self.statement = 0  # the number of the statement now running in the cell (1 = the first)

    def add(self, entry: ManifestEntry) -> None:
        if len(self.entries) < MANIFEST_ENTRIES:
            self.entries.append(entry)
        else:
            self.dropped += 1


def entry(ctx: SourceContext, stmt: lang.Load | lang.Save, access: str, versions: list[int],
          statement: int) -> ManifestEntry:
    """The entry of a load that read (access "read") or a save that wrote, with the delta
    versions it opened or made (a version range opens several: the entry names the last)."""
    save = access != "read"
    facts = {} if save else file_facts(ctx, stmt.format, stmt.path)
    return ManifestEntry(
        "write" if save else "read", stmt.format[:64], shown_path(ctx, stmt.path), statement=statement,
        line=max(0, stmt.line), table=lake_table(stmt.format, stmt.path), version=versions[-1] if versions else None,
        mode=getattr(stmt, "mode", "")[:32] if save else "", **facts)


def lake_table(fmt: str, path: str) -> str:
    """db.table when a delta `path` names a table of the lake (`db.table`, `table` in db default, or
    the relative `db/table`), else "". Read from the name alone, as sources/delta.py places it (no
    file system call on a cell's path: the read or write has just resolved it, and the server
    checks the name against the lake itself)."""
    if fmt.lower() != "delta":
        return ""
    m = _LAKE_NAME.match(path.strip()) or _LAKE_PATH.match(path.strip())
    if m is None:
        return ""
    return f"{m.group(1) or 'default'}.{m.group(2)}"


def delta_version(ctx: SourceContext, fmt: str, path: str) -> list[int]:
    """[the latest version] of a delta table written elsewhere (the cluster), [] when it is none."""
    if fmt.lower() != "delta":
        return []
    try:
        from deltalake import DeltaTable

        from console.sources.delta import lake_location

        location, _ = lake_location(ctx, path)
        return [int(DeltaTable(str(location)).version())]
    except Exception:  # a manifest without the version rather than a failed save
        return []


def file_facts(ctx: SourceContext, fmt: str, path: str) -> dict[str, Any]:
    """size, mtime, digest (and files, for a folder) of a plain file input; {} when there is none."""
    if fmt.lower() not in FILE_FORMATS:
        return {}
    from console.sources import SourceError
    from console.sources.paths import resolve

    try:
        real = resolve(ctx, path)
        st = real.stat()
    except (SourceError, OSError):
        return {}
    if real.is_file():
        with open(real, "rb") as fh:
            head = fh.read(HEAD_BYTES)
        return {"size": st.st_size, "mtime": st.st_mtime, "digest": "sha256:" + hashlib.sha256(head).hexdigest()}
    if not real.is_dir():
        return {}
    listing = hashlib.sha256()
    count = total = 0
    latest = st.st_mtime
    for root, dirs, names in os.walk(real):
        dirs.sort()
        for name in sorted(names):
            if count >= MAX_LISTED:
                break
            file = Path(root, name)
            try:
                fst = file.stat()
            except OSError:
                continue
            count += 1
            total += fst.st_size
            latest = max(latest, fst.st_mtime)
            rel = str(file.relative_to(real))
            listing.update(f"{rel}\0{fst.st_size}\0{fst.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return {"size": total, "files": count, "mtime": latest, "digest": "sha256:" + listing.hexdigest()}


def shown_path(ctx: SourceContext, path: str) -> str:
    """The path as the user may see it (the data folder's own paths as lake:…)."""
    if not path.lstrip().startswith(("/", "~")):  # a lake name or a path under the lake: shown as written
        return path[:4096]
    from console.sources.paths import scrub

    return scrub(ctx, path)[:4096]
