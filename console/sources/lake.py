"""What the lake holds, by name: delta tables (`db.table`) and the files and folders a path names.

One listing for the kernel's completion (inside load delta.` and load csv.`) and the server's data
panel (console/server/api/lake.py), so both name the same tables the same way. Names only: reading a
table's schema or history is the caller's business.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from console.sources.paths import visible

MAX_ENTRIES = 500  # a lake with more is listed in part (completion and the panel show this many)


@dataclass(frozen=True)
class LakeEntry:
    name: str   # `db.table` for a delta table, else the path relative to the lake
    path: Path
    kind: str   # "delta", "folder" or "file"


def delta_tables(lake: Path) -> list[LakeEntry]:
    """Every `<lake>/<db>/<table>` holding a `_delta_log`, as `db.table`, sorted."""
    if not lake.is_dir():
        return []
    found = sorted(lake.glob("*/*/_delta_log"))[:MAX_ENTRIES]
    return [LakeEntry(f"{log.parent.parent.name}.{log.parent.name}", log.parent, "delta") for log in found
            if visible(log.parent.parent.name) and visible(log.parent.name)]


def children(lake: Path, partial: str) -> list[LakeEntry]:
    """The files and folders of the lake folder `partial` names (up to its last `/`), relative to the lake.

    `partial` is what was typed so far; nothing outside the lake is listed (`..`, absolute paths).
    """
    folder_text = partial.rsplit("/", 1)[0] if "/" in partial else ""
    if partial.startswith("/") or ".." in folder_text.split("/"):
        return []
    folder = lake / folder_text if folder_text else lake
    try:
        real = folder.resolve()
        if not real.is_dir() or not (real == lake.resolve() or lake.resolve() in real.parents):
            return []
        names = sorted(p for p in real.iterdir() if visible(p.name))[:MAX_ENTRIES]
    except OSError:
        return []
    prefix = f"{folder_text}/" if folder_text else ""
    return [LakeEntry(prefix + p.name + ("/" if p.is_dir() else ""), p, "folder" if p.is_dir() else "file")
            for p in names]
