"""What a session does with a distributed table (a cluster select's result, catalog.DistributedTable)
beyond selects: `save` it from the cluster, and let a Python cell's actors read its files.

A save as delta or parquet is written by Daft's workers, on the nodes that hold the rows: they
write parquet files into the target (the lake, which every node sees), and the kernel publishes
them: for delta one commit that adds those files (deltalake, the same log our other saves write;
an overwrite removes the old files from the version, as Delta's overwrite does), for parquet the
staged folder's rename, as every file save; partitionBy makes hive folders (Daft's), and for
delta each file's partition values in the log. The rows never pass through the kernel. Saves the
cluster path does not cover (another format, mergeSchema/overwriteSchema) take the kernel's path,
which reads the rows only within CONSOLE_RESULT_KEEP_BYTES (else "save it first").
"""
from __future__ import annotations

import json
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from console.kernel.catalog import DistributedTable
from console.kernel.origins import MIN_ROWS, Origin, _fragments
from console.sources.base import SourceError

if TYPE_CHECKING:
    from console import lang
    from console.kernel.sqlengines.cluster import Written

_NAME = "distributed_input"  # the table's name in the Daft SQL of a save
_OPTIONS_FOR_THE_KERNEL = ("mergeschema", "overwriteschema")


def cluster_save(session: Any, entry: DistributedTable, stmt: "lang.Save") -> bool:
    """Save `entry` from the cluster; False when this save is one for the kernel's path."""
    fmt = stmt.format.lower()
    if fmt not in ("delta", "parquet") or any(k.lower() in _OPTIONS_FOR_THE_KERNEL for k in stmt.options):
        return False
    missing = [c for c in stmt.partition_by if c not in entry.schema.names]
    if missing:
        raise SourceError(f"partitionBy column {', '.join(missing)} is not in the table "
                          f"(columns: {', '.join(entry.schema.names)})")
    if fmt == "delta":
        _save_delta(session, entry, stmt)
    else:
        _save_parquet(session, entry, stmt)
    return True


def _write(session: Any, entry: DistributedTable, stmt: "lang.Save", out: Path, delta: bool) -> "Written":
    return session.cluster_sql.write(f"SELECT * FROM {_NAME}", (_NAME,), {_NAME: entry}, False, stmt.line,
                                     stmt.column, out, delta=delta, partition_by=tuple(stmt.partition_by))


def _save_delta(session: Any, entry: DistributedTable, stmt: "lang.Save") -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import DeltaTable, Schema
    from deltalake.exceptions import DeltaError
    from deltalake.transaction import AddAction, RemoveAction, create_table_with_add_actions

    from console.sources.base import exists_error, normalize_mode, schema_mismatch
    from console.sources.delta import lake_location

    mode = normalize_mode(stmt.mode)
    location, shown = lake_location(session.source_context(), stmt.path, write=True)
    exists = DeltaTable.is_deltatable(str(location))
    if exists and mode == "ignore":
        return
    if exists and mode == "errorIfExists":
        raise exists_error(f"delta table {shown}")
    keys = list(stmt.partition_by)
    if exists and DeltaTable(str(location)).metadata().partition_columns != keys:
        have = DeltaTable(str(location)).metadata().partition_columns
        raise SourceError(f"cannot save to delta table {shown}: it is partitioned by [{', '.join(have)}], the save "
                          f"by [{', '.join(keys)}]. Use `save overwrite … where overwriteSchema=\"true\"` to "
                          "repartition it")
    written = _write(session, entry, stmt, location, delta=True)
    files = written.files
    try:
        # The files hold the columns but the partition keys (their values are in the folders and the log).
        found = pq.read_schema(files[0]).remove_metadata() if files else entry.schema
        schema = pa.schema([entry.schema.field(n) if n in keys or n not in found.names else found.field(n)
                            for n in entry.schema.names])
        if exists:
            old = pa.schema(DeltaTable(str(location)).schema().to_arrow())
            new = pa.schema(Schema.from_arrow(schema).to_arrow())
            if [(f.name, f.type) for f in old] != [(f.name, f.type) for f in new]:
                hint = ('Add where mergeSchema="true" to add new columns.' if mode == "append"
                        else 'Add where overwriteSchema="true" to replace the schema.')
                error = schema_mismatch(f"delta table {shown}", old, new, hint)
                raise SourceError(error.message.replace("cannot append to", "cannot overwrite", 1)
                                  if mode != "append" else error.message)
        actions: list[AddAction] = []
        for i, f in enumerate(files):
            st = os.stat(f)
            rows = pq.ParquetFile(f).metadata.num_rows
            values = written.partitions[i] if keys else {}
            actions.append(AddAction(os.path.relpath(f, location), st.st_size, values,
                                     int(st.st_mtime * 1000), True, json.dumps({"numRecords": rows})))
        if exists:  # one commit: the files added, and for an overwrite the old ones removed from this version
            changes: list[AddAction | RemoveAction] = list(actions)
            DeltaTable(str(location)).create_write_transaction(
                changes, "overwrite" if mode == "overwrite" else "append", schema, partition_by=keys or None)
        else:
            create_table_with_add_actions(str(location), Schema.from_arrow(schema), actions, mode="error",
                                          partition_by=keys or None)
    except BaseException as exc:
        for f in files:  # not in the log: nobody reads them
            Path(f).unlink(missing_ok=True)
        if isinstance(exc, DeltaError):
            raise SourceError(f"cannot save to delta table {shown}: {exc}") from exc
        raise


def _save_parquet(session: Any, entry: DistributedTable, stmt: "lang.Save") -> None:
    from console.sources.base import normalize_mode
    from console.sources.formats import ParquetSource
    from console.sources.paths import data_files, resolve_target, staged_write

    import pyarrow as pa

    mode = normalize_mode(stmt.mode)
    target = resolve_target(session.source_context(), stmt.path)
    keys = list(stmt.partition_by)
    if mode == "append" and target.is_dir():
        existing = data_files(target, (".parquet", ".parq"), stmt.path)
        if existing:
            source = ParquetSource()
            source._check_layout(existing[0], target, keys, stmt.path)
            data = pa.schema([f for f in entry.schema if f.name not in keys]).empty_table()
            source.check_append(existing[0], data, dict(stmt.options), stmt.path)
    with staged_write(target, mode) as stage:
        if stage is None:
            return
        files = _write(session, entry, stmt, stage, delta=False).files
        # Named in row order: a load lists a folder's files by name, and Daft names them at random.
        tag = os.urandom(6).hex()
        for i, f in enumerate(files):
            os.rename(f, Path(f).parent / f"part-{tag}-{i:05d}.parquet")


def origin(entry: DistributedTable) -> Origin | None:
    """The direct-read origin of a distributed table: a Python cell's actors read its row groups
    themselves (console/kernel/origins.py), so the kernel decodes nothing of it."""
    if entry.num_rows < MIN_ROWS:
        return None
    return FilesOrigin(weakref.ref(entry), "parquet", str(entry.folder), [], files=entry.files, schema=entry.schema)


@dataclass
class FilesOrigin(Origin):
    """An Origin whose fragments are read from the files' footers when a cell first asks, not at
    every select (a result of many files on shared storage costs a footer read per file)."""

    files: list[str] = field(default_factory=list)
    schema: Any = None

    def conf_value(self, table: Any) -> str | None:
        rows = int(getattr(table, "num_rows", -1))
        if not self.fragments and self.table() is table:
            try:
                found = _fragments(self.files, self.schema)
            except Exception:  # any doubt: the ordinary path (within CONSOLE_RESULT_KEEP_BYTES)
                return None
            if found is None or sum(f[2] for f in found) != rows:
                return None
            self.fragments = found
        value = super().conf_value(table)
        # Written by the cluster into the lake, which every node sees: actors on any node read them.
        return None if value is None else json.dumps({**json.loads(value), "shared": True})
