"""Delta tables through deltalake: lake names (db.table) and paths, time travel, version ranges, saves."""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from console.sources.base import (
    Source, SourceContext, SourceError, bool_option, exists_error, int_option, normalize_mode, option, register,
    schema_mismatch,
)
from console.sources.paths import check_roots, missing, resolve, resolve_target

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as pads

VERSION_COLUMN = "__delta_version__"
_LAKE_NAME = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?$")
_MODES: dict[str, Literal["overwrite", "append", "error", "ignore"]] = {
    "overwrite": "overwrite", "append": "append", "errorIfExists": "error", "ignore": "ignore"}
# The versions reads opened and writes made while a caller watches (a run's manifest): taken from
# the very DeltaTable that was read or written, since opening the table again later could see a
# version another writer made meanwhile.
_SEEN: ContextVar[list[int] | None] = ContextVar("delta_versions_seen", default=None)


@contextmanager
def watching() -> Iterator[list[int]]:
    """The delta versions read or written inside the block, in order."""
    seen: list[int] = []
    token = _SEEN.set(seen)
    try:
        yield seen
    finally:
        _SEEN.reset(token)


def _note(table: Any) -> None:
    seen = _SEEN.get()
    if seen is not None:
        seen.append(int(table.version()))


def lake_location(ctx: SourceContext, path: str, write: bool = False) -> tuple[Path, str]:
    """(folder, name shown in messages). `db.table` and `table` (db `default`) live in the lake;
    a name with `/` is a path (relative ones under the lake). Either way symlink-free and fenced."""
    name = path.strip()
    if "/" in name or name.startswith("~"):
        return (resolve_target if write else resolve)(ctx, name), name
    if not _LAKE_NAME.match(name):
        raise SourceError(f"delta table name '{path}' is not valid: use db.table "
                          f"(letters, digits, _) or a path containing '/'")
    db, _, table = name.rpartition(".")
    location = ctx.lake / (db or "default") / table
    real = Path(os.path.realpath(location))
    # A db folder in the lake that is a symlink would carry reads and writes elsewhere.
    check_roots(ctx, real, name)
    return real, name


@register("delta")
class DeltaSource(Source):
    """Loads: versionAsOf, timestampAsOf, startingVersion + endingVersion. Saves: every mode, partitionBy,
    mergeSchema / overwriteSchema."""

    def _open(self, location: Path, shown: str, ctx: SourceContext | None = None) -> Any:
        from deltalake import DeltaTable

        if not DeltaTable.is_deltatable(str(location)):
            raise SourceError(f"{missing(ctx, shown, 'delta table')} (looked in {location})")
        return DeltaTable(str(location))

    def read(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pa.Table":
        location, shown = lake_location(ctx, path)
        table = self._open(location, shown, ctx)
        start = int_option(options, "startingVersion")
        end = int_option(options, "endingVersion")
        if start is not None or end is not None:
            return self._read_range(table, shown, start, end)
        self._time_travel(table, shown, options)
        _note(table)
        return table.to_pyarrow_table()

    def dataset(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pads.Dataset | None":
        """One version's files as a dataset (read() is its to_table()); a version range is read at once."""
        if int_option(options, "startingVersion") is not None or int_option(options, "endingVersion") is not None:
            return None
        location, shown = lake_location(ctx, path)
        table = self._open(location, shown, ctx)
        self._time_travel(table, shown, options)
        _note(table)
        try:
            dataset = table.to_pyarrow_dataset()
        except Exception as exc:  # deltalake's DeltaError (e.g. a reader feature it lacks)
            raise SourceError(f"cannot read delta table {shown}: {exc}") from exc
        return _on_local_files(dataset, location)


    def _time_travel(self, table: Any, shown: str, options: dict[str, str]) -> None:
        version = int_option(options, "versionAsOf")
        stamp = option(options, "timestampAsOf")
        if version is not None and stamp:
            raise SourceError("options versionAsOf and timestampAsOf cannot be used together")
        if version is not None:
            self._load_version(table, shown, version)
        elif stamp:
            try:
                table.load_as_version(stamp.strip())
            except Exception as exc:  # deltalake raises DeltaError or ValueError for a bad stamp
                raise SourceError(f"option timestampAsOf='{stamp}' of delta table {shown}: {exc}") from exc

    def _load_version(self, table: Any, shown: str, version: int) -> None:
        latest = table.version()
        if version < 0 or version > latest:
            raise SourceError(f"option versionAsOf={version} is out of range: delta table {shown} "
                              f"has versions 0 to {latest}")
        table.load_as_version(version)

    def _read_range(self, table: Any, shown: str, start: int | None, end: int | None) -> "pa.Table":
        """MLSQL's version range: the union of the snapshots of versions [start, end), each row
        tagged with its version in __delta_version__ (as MLSQL's DeltaDataSource does)."""
        import pyarrow as pa

        if start is None or end is None:
            raise SourceError("options startingVersion and endingVersion go together; give both")
        latest = table.version()
        if start < 0 or end <= start or end - 1 > latest:
            raise SourceError(f"startingVersion={start} and endingVersion={end} (exclusive) are out of "
                              f"range: delta table {shown} has versions 0 to {latest}")
        parts = []
        for version in range(start, end):
            table.load_as_version(version)
            snap = table.to_pyarrow_table()
            parts.append(snap.append_column(VERSION_COLUMN, pa.array([version] * snap.num_rows, pa.int64())))
        _note(table)  # the range's last version (each row names its own in VERSION_COLUMN)
        return pa.concat_tables(parts, promote_options="permissive")

    def write(self, ctx: SourceContext, table: "pa.Table", path: str, mode: str,
              options: dict[str, str], partition_by: list[str]) -> None:
        from deltalake import DeltaTable, write_deltalake
        from deltalake.exceptions import DeltaError, SchemaMismatchError

        mode = normalize_mode(mode)
        location, shown = lake_location(ctx, path, write=True)
        missing = [c for c in partition_by or [] if c not in table.column_names]
        if missing:
            raise SourceError(f"partitionBy column {', '.join(missing)} is not in the table "
                              f"(columns: {', '.join(table.column_names)})")
        if mode in ("errorIfExists", "ignore") and DeltaTable.is_deltatable(str(location)):
            if mode == "ignore":
                return
            raise exists_error(f"delta table {shown}")
        schema_mode: Literal["overwrite", "merge"] | None = None
        if bool_option(options, "overwriteSchema", False):
            schema_mode = "overwrite"
        elif bool_option(options, "mergeSchema", False):
            schema_mode = "merge"
        # An existing table is written through its DeltaTable, which then holds the version this
        # write committed (for a watcher), not whatever is latest when someone looks again.
        target: Any = DeltaTable(str(location)) if DeltaTable.is_deltatable(str(location)) else str(location)
        try:
            # The table goes to deltalake as is: no copy, and the commit is atomic by Delta's log.
            write_deltalake(target, table, mode=_MODES[mode], partition_by=list(partition_by) or None,
                            schema_mode=schema_mode)
        except SchemaMismatchError as exc:
            raise self._mismatch(location, shown, table, mode, exc) from exc
        except DeltaError as exc:
            text = str(exc)
            if "partitioning does not match" in text:
                raise SourceError(f"cannot save to delta table {shown}: {text.split('. ')[0]}. Use "
                                  f"`save overwrite … where overwriteSchema=\"true\"` to repartition it") from exc
            raise SourceError(f"cannot save to delta table {shown}: {text}") from exc
        except (ValueError, TypeError, OSError) as exc:
            raise SourceError(f"cannot save to delta table {shown}: {exc}") from exc
        if _SEEN.get() is not None:
            _note(target if isinstance(target, DeltaTable) else DeltaTable(str(location)))

    def _mismatch(self, location: Path, shown: str, table: "pa.Table", mode: str, exc: Exception) -> SourceError:
        import pyarrow as pa
        from deltalake import DeltaTable

        existing = pa.schema(DeltaTable(str(location)).schema().to_arrow())
        if mode == "append":
            return schema_mismatch(f"delta table {shown}", existing, table.schema,
                                   'Add where mergeSchema="true" to add new columns.')
        error = schema_mismatch(f"delta table {shown}", existing, table.schema,
                                'Add where overwriteSchema="true" to replace the schema.')
        return SourceError(error.message.replace("cannot append to", "cannot overwrite", 1))


def _on_local_files(dataset: "pads.Dataset", location: Path) -> "pads.Dataset":
    """The same fragments read from the local filesystem by path.

    deltalake's dataset reads through a Python filesystem handler (each read calls into Python,
    under the GIL) and names files relative to the table, which a change check cannot stat.
    Kept as is when a file is not where its relative name says (e.g. an escaped partition value).
    """
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs

    fragments = list(dataset.get_fragments())
    paths = [location / f.path for f in fragments]
    if not all(p.is_file() for p in paths):
        return dataset
    local = pafs.LocalFileSystem()
    rebuilt = [dataset.format.make_fragment(str(p), filesystem=local, partition_expression=f.partition_expression)
               for p, f in zip(paths, fragments, strict=True)]
    return ds.FileSystemDataset(rebuilt, dataset.schema, dataset.format, local)
