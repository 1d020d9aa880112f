"""The server's reading of the lake for the data panel: folders without following links, delta
logs decoded as untrusted input.

The lake is written by members' cells, and the server runs with more rights than any of them (as
root in the container). So every folder is opened by descriptor, one name at a time, with
O_NOFOLLOW (as uploads are written, console/server/api/lake.py): a link a cell planted
(`lake/db3 -> /elsewhere`) is never followed, so nothing outside the lake is listed or read; links
are left out of listings. A delta log is read within caps (files, bytes per file and per table)
and each action is checked by type: a malformed log (`².json`, `"size": "abc"`,
`"partitionColumns": 5`, truncated or nested JSON) gives that table an `error` and leaves the
listing and every other table as they are.
"""
from __future__ import annotations

import json
import logging
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from console.coltypes import from_delta
from console.sources.lake import MAX_ENTRIES
from console.sources.paths import visible

log = logging.getLogger(__name__)

MAX_LOG_FILES = 1000              # versions read from a delta log (the latest ones)
MAX_LOG_BYTES = 16 * 1024 * 1024  # bytes of one log file
MAX_TABLE_LOG_BYTES = 64 * 1024 * 1024  # bytes of all the versions one table's description reads
_COMMIT = re.compile(r"([0-9]{1,20})\.json")  # ASCII digits only: '²'.isdigit() is True, int('²') fails
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class BadLog(ValueError):
    """A delta log this reader will not describe; the message says which version and why."""


@dataclass(frozen=True)
class Table:
    db: str
    table: str

    @property
    def name(self) -> str:
        return f"{self.db}.{self.table}"


@dataclass(frozen=True)
class Entry:
    name: str   # relative to the lake; a folder's ends with '/'
    kind: str   # "folder" or "file"
    size: int | None


@contextmanager
def opened(lake: Path, parts: tuple[str, ...]) -> Iterator[int | None]:
    """A descriptor of lake/parts… (None when one is missing, a file, or a link: never followed)."""
    try:
        fd = os.open(lake, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        yield None
        return
    try:
        for part in parts:
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:  # ELOOP for a link, ENOTDIR, ENOENT, a name too long…
                yield None
                return
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _scan(fd: int) -> list[tuple[str, int, int]]:
    """(name, st_mode, size) of a folder's visible entries, links left out, sorted, at most MAX_ENTRIES."""
    out = []
    for name in sorted(os.listdir(fd)):
        if not visible(name):
            continue
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            out.append((name, st.st_mode, st.st_size))
            if len(out) >= MAX_ENTRIES:
                break
    return out


def folder(lake: Path, parts: tuple[str, ...]) -> list[Entry]:
    """What lake/parts… holds (nothing for a folder that is missing or reached through a link)."""
    prefix = "".join(p + "/" for p in parts)
    with opened(lake, parts) as fd:
        if fd is None:
            return []
        return [Entry(prefix + name + "/", "folder", None) if stat.S_ISDIR(mode) else Entry(prefix + name, "file", size)
                for name, mode, size in _scan(fd)]


def tables(lake: Path) -> list[Table]:
    """Every lake/<db>/<table>/_delta_log that is a real folder all the way down, as db.table, sorted."""
    found: list[Table] = []
    with opened(lake, ()) as top:
        if top is None:
            return []
        for db, mode, _ in _scan(top):
            if not stat.S_ISDIR(mode):
                continue
            with opened(lake, (db,)) as db_fd:
                for name, inner, _ in _scan(db_fd) if db_fd is not None else []:
                    if stat.S_ISDIR(inner) and _has_log(db_fd, name):
                        found.append(Table(db, name))
            if len(found) >= MAX_ENTRIES:
                break
    return found[:MAX_ENTRIES]


def find(lake: Path, db: str, table: str) -> Table | None:
    """lake/<db>/<table> as `tables` would list it (real folders, a _delta_log), without listing the lake."""
    if not (visible(db) and visible(table)) or "/" in db + table or db in (".", "..") or table in (".", ".."):
        return None
    with opened(lake, (db,)) as db_fd:
        if db_fd is None:
            return None
        try:
            st = os.stat(table, dir_fd=db_fd, follow_symlinks=False)
        except (OSError, ValueError):
            return None
        return Table(db, table) if stat.S_ISDIR(st.st_mode) and _has_log(db_fd, table) else None


def _has_log(db_fd: int | None, name: str) -> bool:
    try:
        st = os.stat(f"{name}/_delta_log", dir_fd=db_fd, follow_symlinks=False)
    except (OSError, ValueError):
        return False
    # `name` itself was lstat-ed a directory; the walk that reads the log opens each step again with O_NOFOLLOW.
    return stat.S_ISDIR(st.st_mode)


# ------------------------------------------------------------------ delta logs
def summary(lake: Path, t: Table, history: bool = False) -> dict[str, Any]:
    """A delta table from its log: version, schema, partitions, rows, size, files, last change;
    or {name, kind, path, error} when the log cannot be described."""
    out: dict[str, Any] = {"name": t.name, "kind": "delta", "path": f"lake:{t.db}/{t.table}"}
    try:
        with opened(lake, (t.db, t.table, "_delta_log")) as fd:
            if fd is None:
                raise BadLog("its _delta_log is not a folder of the lake (a link is not followed)")
            return {**out, **_describe(fd, history)}
    except BadLog as exc:
        return {**out, "error": str(exc)}
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        # Anything else a member's files can make go wrong is that table's, never the listing's.
        log.info("lake table %s: its log is unreadable: %r", t.name, exc)
        return {**out, "error": f"its _delta_log is unreadable ({type(exc).__name__})"}


def commit(lake: Path, t: Table, version: int) -> dict[str, Any] | None:
    """What version `version` of table `t`'s log says of its commit ({timestamp, operation,
    parameters}; {} without a commitInfo), or None when the log holds no such version (never
    written, or cleaned up after a checkpoint). BadLog when it is there but unreadable."""
    if version < 0:
        return None
    with opened(lake, (t.db, t.table, "_delta_log")) as fd:
        if fd is None:
            raise BadLog("its _delta_log is not a folder of the lake (a link is not followed)")
        name = f"{version:020d}.json"
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            raise BadLog(f"version {version}'s log is not a file")
        info: dict[str, Any] = {}
        for action in _actions(_read(fd, name, version, MAX_LOG_BYTES), version):
            if "commitInfo" in action:
                _apply(action, version, {}, info)
        return info


def _describe(fd: int, history: bool) -> dict[str, Any]:
    numbered = sorted((int(m.group(1)), name) for name in os.listdir(fd) if (m := _COMMIT.fullmatch(name)))
    if not numbered:
        raise BadLog("no readable versions in its _delta_log")
    complete = numbered[0][0] == 0 and len(numbered) <= MAX_LOG_FILES
    numbered = numbered[-MAX_LOG_FILES:]
    files: dict[str, tuple[int, int | None]] = {}
    meta: dict[str, Any] = {}
    versions: list[dict[str, Any]] = []
    budget = MAX_TABLE_LOG_BYTES
    for version, name in numbered:
        text = _read(fd, name, version, budget)
        budget -= len(text)
        info: dict[str, Any] = {"version": version}
        for action in _actions(text, version):
            _apply(action, version, files, info)
            if "metaData" in action:
                meta = _object(action["metaData"], version, "metaData")
        versions.append(info)
    partitions = meta.get("partitionColumns") or []
    if not isinstance(partitions, list) or not all(isinstance(c, str) for c in partitions):
        raise BadLog(f"version {versions[-1]['version']}'s log: metaData.partitionColumns is not a list of names")
    all_counted = all(r is not None for _, r in files.values())
    out: dict[str, Any] = {
        "version": versions[-1]["version"], "last_change": versions[-1].get("timestamp"),
        "partition_columns": partitions, "schema": _schema(meta.get("schemaString")),
        "files": len(files) if complete else None,
        "size": sum(s for s, _ in files.values()) if complete else None,
        "rows": sum(r or 0 for _, r in files.values()) if complete and all_counted else None}
    if history:
        out["history"] = versions[::-1]
    return out


def _read(fd: int, name: str, version: int, budget: int) -> str:
    try:
        file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        raise BadLog(f"version {version}'s log is unreadable (a link or not a file)") from None
    try:
        st = os.fstat(file_fd)
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the request, a device would never end
            raise BadLog(f"version {version}'s log is not a file")
        if st.st_size > min(MAX_LOG_BYTES, budget):
            raise BadLog(f"version {version}'s log is too big to describe here ({st.st_size} bytes)")
        data = os.pread(file_fd, st.st_size, 0)
    finally:
        os.close(file_fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadLog(f"version {version}'s log is not UTF-8 text") from None


def _actions(text: str, version: int) -> Iterator[dict[str, Any]]:
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except (ValueError, RecursionError):  # truncated, not JSON, or nested past the parser's stack
            raise BadLog(f"version {version}'s log is not JSON lines (truncated?)") from None
        if isinstance(action, dict):
            yield action


def _object(value: Any, version: int, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadLog(f"version {version}'s log: {what} is not an object")
    return value


def _count(value: Any) -> int | None:
    """A non-negative integer (JSON true is no size), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _apply(action: dict[str, Any], version: int, files: dict[str, tuple[int, int | None]],
           info: dict[str, Any]) -> None:
    if "add" in action:
        add = _object(action["add"], version, "add")
        size = _count(add.get("size", 0))
        if not isinstance(add.get("path"), str) or size is None:
            raise BadLog(f"version {version}'s log: an add action has no path or a size that is not a number")
        files[add["path"]] = (size, _num_records(add.get("stats")))
    if "remove" in action:
        remove = _object(action["remove"], version, "remove")
        if isinstance(remove.get("path"), str):
            files.pop(remove["path"], None)
    if "commitInfo" in action:
        ci = _object(action["commitInfo"], version, "commitInfo")
        stamp, op, params = ci.get("timestamp"), ci.get("operation"), ci.get("operationParameters")
        info.update({"timestamp": _count(stamp), "operation": op if isinstance(op, str) else None,
                     "parameters": params if isinstance(params, dict) else None})


def _num_records(stats: Any) -> int | None:
    try:
        value = json.loads(stats).get("numRecords") if isinstance(stats, str) else None
    except (ValueError, AttributeError, RecursionError):
        return None
    return _count(value)


def _schema(text: Any) -> list[dict[str, str]]:
    try:
        fields = json.loads(text).get("fields", []) if isinstance(text, str) else []
    except (ValueError, AttributeError, RecursionError):
        return []
    out = []
    for f in fields if isinstance(fields, list) else []:
        if isinstance(f, dict):
            try:
                kind = from_delta(f.get("type"))  # Spark's SQL names: int, bigint, decimal(38,0), array<…>
            except RecursionError:
                kind = "?"
            out.append({"name": str(f.get("name")), "type": kind})
    return out


def head(lake: Path, parts: tuple[str, ...], limit: int) -> tuple[bytes, int] | None:
    """The first `limit` bytes of the lake's file parts[-1] and its size; None when it is no
    plain file there (gone, a link, a folder, a FIFO): opened without following links."""
    with opened(lake, parts[:-1]) as fd:
        if fd is None:
            return None
        try:
            file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
        except OSError:
            return None
        try:
            st = os.fstat(file_fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            return os.pread(file_fd, limit, 0), st.st_size
        finally:
            os.close(file_fd)
