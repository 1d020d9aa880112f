"""Where a catalog table came from, so actors can read its files themselves (direct reads).

When a Python cell's input is the very table a plain `load parquet.`…`` or `load delta.`…``
produced (no select in between), the kernel does not copy it anywhere: the job names the
table's file fragments (the row groups of its parquet files, or of the delta table's data files
at the version that was loaded) and each actor reads its own with pyarrow.

The fragments are resolved when the load runs, right after the read, so they describe the files
the table came from (a delta table written to afterwards keeps the loaded version's files; so
does time travel). A load is only recorded when reading the fragments gives back exactly that
table: same columns and types (after a cast that loses nothing), same row count. Hive-partitioned
folders, delta partition columns or deletion vectors, version ranges, files only this kernel sees
(its private /tmp) and every other format are not recorded, and the job takes the IPC-file path.
"""
from __future__ import annotations

import base64
import json
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from console.actors.fragments import FRAGMENTS_KEY, Fragment

MIN_ROWS = 1  # an empty table is cheaper to copy than to describe


@dataclass
class Origin:
    """A loaded table's fragments, tied to the table object (a rebound name is a new table)."""

    table: "weakref.ref[pa.Table]"
    format: str
    path: str
    fragments: list[Fragment]
    version: int | None = None

    def conf_value(self, table: pa.Table) -> str | None:
        """The job's conf entry naming the fragments, or None if `table` is not the loaded one."""
        if self.table() is not table:
            return None
        loaded: pa.Table = table  # (mypy narrows `table` to the weak reference's Optional here)
        schema = base64.b64encode(loaded.schema.serialize().to_pybytes()).decode()
        return json.dumps({"schema": schema, "fragments": [list(f) for f in self.fragments],
                           "format": self.format, "path": self.path, "version": self.version})


def record_load(ctx: Any, fmt: str, path: str, options: dict[str, str], table: pa.Table) -> Origin | None:
    """The Origin of a table a `load` just read, or None when actors could not read it themselves."""
    fmt = fmt.lower()
    if table.num_rows < MIN_ROWS:
        return None
    try:
        if fmt == "parquet":
            files, version = _parquet_files(ctx, path), None
        elif fmt == "delta":
            found = _delta_files(ctx, path, options)
            if found is None:
                return None
            files, version = found
        else:
            return None
        if not all(_reachable(ctx, f) for f in files):
            return None
        fragments = _fragments(files, table.schema)
    except Exception:  # any doubt means the ordinary path, which always works
        return None
    if fragments is None or sum(f[2] for f in fragments) != table.num_rows:
        return None
    return Origin(weakref.ref(table), fmt, path, fragments, version)


def _parquet_files(ctx: Any, path: str) -> list[str]:
    from console.sources.files import partition_keys
    from console.sources.paths import data_files, resolve

    root = resolve(ctx, path)
    files = data_files(root, (".parquet", ".parq"), path)
    if not files or (root.is_dir() and partition_keys(files[0], root)):
        return []  # hive partition columns come from folder names, not from the files
    return [str(f) for f in files]


def _delta_files(ctx: Any, path: str, options: dict[str, str]) -> tuple[list[str], int] | None:
    from deltalake import DeltaTable

    from console.sources.delta import DeltaSource, lake_location

    if any(k.lower() in ("startingversion", "endingversion") for k in options):
        return None  # a union of snapshots with a version column: not a list of files
    location, shown = lake_location(ctx, path)
    table = DeltaTable(str(location))
    DeltaSource()._time_travel(table, shown, options)  # the same version the load read
    if table.metadata().partition_columns:
        return None
    uris = table.file_uris()
    files = [u[len("file://"):] if u.startswith("file://") else u for u in uris]
    if any("://" in f for f in files):
        return None  # object storage: the kernel's credentials, not the actors'
    return files, int(table.version())


def _reachable(ctx: Any, file: str) -> bool:
    """Whether the cell's actors see this path too.

    Kernels and the Ray head run in separate sandboxes (console/cluster/sandbox.py), each with a
    private /tmp; the head's binds the data dir and the data roots back in, wherever they are. A
    file elsewhere under /tmp (a path only this kernel sees) is handed over by the kernel.
    """
    real = Path(file).resolve()
    tmp = Path(tempfile.gettempdir()).resolve()
    if not real.is_relative_to(tmp):
        return True
    shared = [Path(ctx.data_dir), *(Path(r) for r in getattr(ctx, "data_roots", []))]
    return any(real.is_relative_to(Path(root).resolve()) for root in shared)


def _fragments(files: list[str], schema: pa.Schema) -> list[Fragment] | None:
    import pyarrow.parquet as pq

    out: list[Fragment] = []
    for file in files:
        meta = pq.ParquetFile(file).metadata
        if not _castable(meta.schema.to_arrow_schema(), schema):
            return None
        for i in range(meta.num_row_groups):
            rows = meta.row_group(i).num_rows
            if rows:
                out.append((str(Path(file)), i, rows))
    return out


def _castable(found: pa.Schema, wanted: pa.Schema) -> bool:
    """The file's columns are the table's, in order, with types the actor can cast to exactly."""
    if found.names != wanted.names:
        return False
    for a, b in zip(found.types, wanted.types, strict=True):
        if a == b:
            continue
        same_kind = ((pa.types.is_string(a) or pa.types.is_large_string(a)) and
                     (pa.types.is_string(b) or pa.types.is_large_string(b))) or \
                    ((pa.types.is_binary(a) or pa.types.is_large_binary(a)) and
                     (pa.types.is_binary(b) or pa.types.is_large_binary(b))) or \
                    (pa.types.is_timestamp(a) and pa.types.is_timestamp(b)) or \
                    (_is_list(a) and _is_list(b) and a.value_type == b.value_type)
        if not same_kind:
            return False
    return True


def _is_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t))


__all__ = ["FRAGMENTS_KEY", "Origin", "record_load"]


def read_before_overwrite(tables: Any, ctx: Any, stmt: Any) -> None:
    """A save that replaces a folder some lazy table reads: read that table first (a delta save
    keeps the old version's files, so only file formats need this). tables: the session's Catalog;
    ctx: its SourceContext; stmt: the lang.Save."""
    from console.sources import SourceError, get_source
    from console.sources.files import FileSource
    from console.sources.paths import resolve_target

    if not isinstance(get_source(stmt.format), FileSource) or stmt.mode.lower() != "overwrite":
        return
    try:
        target = resolve_target(ctx, stmt.path)
    except SourceError:
        return  # the save itself reports it
    tables.pin_under(target)
