"""What every file format shares: paths to tables (hive partitions included) and staged saves."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from console.sources.base import Source, SourceContext, SourceError, normalize_mode
from console.sources.paths import data_files, part_name, resolve, resolve_target, staged_write

if TYPE_CHECKING:
    import pyarrow as pa

# Spark's spelling of a null partition value.
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_INT = re.compile(r"^-?\d{1,18}$")
_FLOAT = re.compile(r"^-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


class FileSource(Source):
    """A format stored as files: a single file, or a folder of part files, optionally hive-partitioned.

    Subclasses give the file suffixes and how to read and write one file; this class does
    paths, folders, partitions, save modes and the atomic publish.
    """

    suffixes: tuple[str, ...] = ()
    suffix: str = ""

    # -- one file, per format ------------------------------------------------------------------
    def read_file(self, path: Path, options: dict[str, str]) -> "pa.Table":
        raise NotImplementedError

    def write_file(self, table: "pa.Table", path: Path, options: dict[str, str]) -> None:
        raise NotImplementedError

    def check_append(self, existing: Path, table: "pa.Table", options: dict[str, str], shown: str) -> None:
        """Raise a SourceError when table cannot join the data already in existing's folder."""

    def read_many(self, files: list[Path], root: Path, options: dict[str, str]) -> "pa.Table":
        """Files of one folder as one table; parquet overrides this with a pyarrow dataset."""
        import pyarrow as pa

        tables = []
        for f in files:
            t = self.read_file(f, options)
            for key, value in partition_values(f, root).items():
                t = t.append_column(key, pa.array([value] * t.num_rows, pa.string()))
            tables.append(t)
        if not tables:
            return pa.table({})
        table = pa.concat_tables(tables, promote_options="permissive")
        return type_partition_columns(table, partition_keys(files[0], root))

    # -- the Source contract -------------------------------------------------------------------
    def read(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pa.Table":
        root = resolve(ctx, path)
        files = data_files(root, self.suffixes, path, ctx)
        if not files:
            raise SourceError(f"path {path} has no {self.name} files")
        try:
            if root.is_file():
                return self.read_file(root, options)
            return self.read_many(files, root, options)
        except SourceError:
            raise
        except (OSError, ValueError, TypeError) as exc:
            # pyarrow's ArrowInvalid is a ValueError; say which path it was about.
            raise SourceError(f"cannot read {self.name} from {path}: {exc}") from exc

    def write(self, ctx: SourceContext, table: "pa.Table", path: str, mode: str,
              options: dict[str, str], partition_by: list[str]) -> None:
        mode = normalize_mode(mode)
        target = resolve_target(ctx, path)
        partition_by = list(partition_by or [])
        missing = [c for c in partition_by if c not in table.column_names]
        if missing:
            raise SourceError(f"partitionBy column {', '.join(missing)} is not in the table "
                              f"(columns: {', '.join(table.column_names)})")
        if mode == "append" and target.is_dir():
            existing = data_files(target, self.suffixes, path)
            if existing:
                self._check_layout(existing[0], target, partition_by, path)
                data = table.drop_columns(partition_by) if partition_by else table
                self.check_append(existing[0], data, options, path)
        with staged_write(target, mode) as stage:
            if stage is None:
                return
            try:
                self._write_parts(table, stage, options, partition_by)
            except SourceError:
                raise
            except (OSError, ValueError, TypeError, NotImplementedError) as exc:
                raise SourceError(f"cannot save {self.name} to {path}: {exc}") from exc

    def _check_layout(self, existing: Path, root: Path, partition_by: list[str], shown: str) -> None:
        keys = partition_keys(existing, root)
        if keys != partition_by:
            raise SourceError(f"cannot append to {shown}: it is partitioned by "
                              f"[{', '.join(keys)}] but the save uses [{', '.join(partition_by)}]")

    def _write_parts(self, table: "pa.Table", stage: Path, options: dict[str, str],
                     partition_by: list[str]) -> None:
        if not partition_by:
            self.write_file(table, stage / part_name(self.suffix), options)
            return
        for values, part in split_partitions(table, partition_by):
            folder = stage.joinpath(*(f"{k}={encode_value(v)}" for k, v in zip(partition_by, values, strict=True)))
            folder.mkdir(parents=True, exist_ok=True)
            self.write_file(part.drop_columns(partition_by), folder / part_name(self.suffix), options)


def encode_value(value: object) -> str:
    if value is None:
        return NULL_PARTITION
    return quote(str(value), safe=" ")


def partition_values(file: Path, root: Path) -> dict[str, str | None]:
    rel = os.path.relpath(file.parent, root)
    values: dict[str, str | None] = {}
    if rel == ".":
        return values
    for segment in Path(rel).parts:
        if "=" in segment:
            key, _, raw = segment.partition("=")
            values[key] = None if raw == NULL_PARTITION else unquote(raw)
    return values


def partition_keys(file: Path, root: Path) -> list[str]:
    return list(partition_values(file, root))


def type_partition_columns(table: "pa.Table", keys: list[str]) -> "pa.Table":
    """Partition values come from folder names as text; make them int64/float64 where they all are."""
    import pyarrow as pa

    for key in keys:
        if key not in table.column_names:
            continue
        col = table.column(key)
        if not pa.types.is_string(col.type):
            continue
        values = [v for v in col.unique().to_pylist() if v is not None]
        if values and all(_INT.match(v) for v in values):
            new_type: pa.DataType = pa.int64()
        elif values and all(_FLOAT.match(v) for v in values):
            new_type = pa.float64()
        else:
            continue
        table = table.set_column(table.column_names.index(key), key, col.cast(new_type))
    return table


def split_partitions(table: "pa.Table", columns: list[str]) -> list[tuple[tuple, "pa.Table"]]:
    """(key values, rows) for each distinct combination of columns, nulls included."""
    import pyarrow as pa

    index = "__row_index__"
    grouped = (table.select(columns)
               .append_column(index, pa.array(range(table.num_rows), pa.int64()))
               .group_by(columns, use_threads=False)
               .aggregate([(index, "list")]))
    keys = grouped.select(columns).to_pylist()
    rows = grouped.column(f"{index}_list")
    return [(tuple(k[c] for c in columns), table.take(rows[i].values)) for i, k in enumerate(keys)]


def same_columns(existing: "pa.Schema", new: "pa.Schema") -> bool:
    """Names and types equal in order; nullability and metadata do not count."""
    return [(f.name, f.type) for f in existing] == [(f.name, f.type) for f in new]

