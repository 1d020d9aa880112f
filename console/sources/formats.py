"""The plain file formats: parquet, csv, json (JSON lines) and text (one `value` row per line)."""
from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from console.sources.base import (
    SourceContext, SourceError, bool_option, char_option, option, register, schema_mismatch,
)
from console.sources.files import FileSource, partition_keys, same_columns, type_partition_columns
from console.sources.paths import data_files, resolve

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as pads


@register("parquet")
class ParquetSource(FileSource):
    suffixes = (".parquet", ".parq")
    suffix = ".parquet"

    def read_file(self, path: Path, options: dict[str, str]) -> "pa.Table":
        import pyarrow.dataset as ds

        return ds.dataset([str(path)], format="parquet").to_table()  # as dataset() reads it

    def read_many(self, files: list[Path], root: Path, options: dict[str, str]) -> "pa.Table":
        import pyarrow as pa
        import pyarrow.dataset as ds

        keys = partition_keys(files[0], root)
        # Partition columns as text, typed afterwards the same way as the other formats do.
        partitioning = ds.partitioning(pa.schema([(k, pa.string()) for k in keys]), flavor="hive") if keys else None
        dataset = ds.dataset([str(f) for f in files], format="parquet", partitioning=partitioning,
                             partition_base_dir=str(root))
        return type_partition_columns(dataset.to_table(), keys)

    def dataset(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pads.Dataset | None":
        """The files as a dataset, unless hive partition folders type their columns from the values."""
        import pyarrow as pa
        import pyarrow.dataset as ds

        root = resolve(ctx, path)
        files = data_files(root, self.suffixes, path, ctx)
        if not files:
            raise SourceError(f"path {path} has no {self.name} files")
        if root.is_dir() and partition_keys(files[0], root):
            return None
        try:
            return ds.dataset([str(f) for f in files], format="parquet")
        except (OSError, pa.ArrowInvalid) as exc:
            raise SourceError(f"cannot read {self.name} from {path}: {exc}") from exc

    def write_file(self, table: "pa.Table", path: Path, options: dict[str, str]) -> None:
        import pyarrow.parquet as pq

        pq.write_table(table, path, compression=option(options, "compression", "snappy"))

    def check_append(self, existing: Path, table: "pa.Table", options: dict[str, str], shown: str) -> None:
        import pyarrow.parquet as pq

        old = pq.read_schema(existing)
        if not same_columns(old, table.schema):
            raise schema_mismatch(shown, old, table.schema)


@register("csv")
class CsvSource(FileSource):
    """CSV as Spark reads it: header and inferSchema default to false (columns _c0, _c1 … of text)."""

    suffixes = (".csv", ".csv.gz", ".tsv")
    suffix = ".csv"

    def _delimiter(self, options: dict[str, str]) -> str:
        return char_option(options, "delimiter", option(options, "sep", ",") or ",")

    def _first_row(self, path: Path, options: dict[str, str]) -> list[str] | None:
        import pyarrow as pa

        with pa.input_stream(str(path), compression="detect") as raw:
            head = raw.read(1 << 20).decode(option(options, "encoding", "utf-8") or "utf-8", "replace")
        reader = csv.reader(head.splitlines(), delimiter=self._delimiter(options),
                            quotechar=char_option(options, "quote", '"'))
        return next(reader, None)

    def read_file(self, path: Path, options: dict[str, str]) -> "pa.Table":
        import pyarrow as pa
        import pyarrow.csv as pcsv

        header = bool_option(options, "header", False)
        infer = bool_option(options, "inferSchema", False)
        first = self._first_row(path, options)
        if first is None:
            return pa.table({})
        names = unique_names(first) if header else [f"_c{i}" for i in range(len(first))]
        escape = option(options, "escape")
        null_value = option(options, "nullValue", "") or ""
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=names, skip_rows=1 if header else 0,
                                          encoding=option(options, "encoding", "utf8") or "utf8"),
            parse_options=pcsv.ParseOptions(delimiter=self._delimiter(options),
                                            quote_char=char_option(options, "quote", '"'),
                                            escape_char=char_option(options, "escape", "\\") if escape else False,
                                            newlines_in_values=bool_option(options, "multiLine", False)),
            convert_options=pcsv.ConvertOptions(
                column_types=None if infer else {n: pa.string() for n in names},
                null_values=[null_value], strings_can_be_null=True))
        return table

    def write_file(self, table: "pa.Table", path: Path, options: dict[str, str]) -> None:
        import pyarrow.csv as pcsv

        pcsv.write_csv(table, path, pcsv.WriteOptions(
            include_header=bool_option(options, "header", False), delimiter=self._delimiter(options)))

    def check_append(self, existing: Path, table: "pa.Table", options: dict[str, str], shown: str) -> None:
        import pyarrow as pa

        first = self._first_row(existing, options) or []
        if bool_option(options, "header", False):
            if first != table.column_names:
                old = pa.schema([(n, pa.string()) for n in first])
                raise schema_mismatch(shown, old, table.schema, "  (compared by the csv header's column names)")
        elif first and len(first) != table.num_columns:
            raise SourceError(f"cannot append to {shown}: its rows have {len(first)} columns, "
                              f"the table has {table.num_columns}")


@register("json")
class JsonSource(FileSource):
    """JSON lines (one object per line), or one document per file with multiLine="true"."""

    suffixes = (".json", ".jsonl", ".ndjson", ".json.gz")
    suffix = ".json"

    def read_file(self, path: Path, options: dict[str, str]) -> "pa.Table":
        import pyarrow as pa
        import pyarrow.json as pjson

        if path.stat().st_size == 0:
            return pa.table({})
        if bool_option(options, "multiLine", False):
            doc = json.loads(path.read_text(encoding="utf-8"))
            return pa.Table.from_pylist(doc if isinstance(doc, list) else [doc])
        return pjson.read_json(path, parse_options=pjson.ParseOptions(newlines_in_values=False))

    def write_file(self, table: "pa.Table", path: Path, options: dict[str, str]) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            for batch in table.to_batches(max_chunksize=16384):
                fh.writelines(json.dumps(row, default=_json_value, ensure_ascii=False) + "\n"
                              for row in batch.to_pylist())


@register("text")
class TextSource(FileSource):
    """One row per line in a string column `value` (wholetext="true": one row per file)."""

    suffixes = (".txt", ".text", ".log", ".md")
    suffix = ".txt"

    def read_file(self, path: Path, options: dict[str, str]) -> "pa.Table":
        import pyarrow as pa

        with pa.input_stream(str(path), compression="detect") as raw:
            text = raw.read().decode(option(options, "encoding", "utf-8") or "utf-8", "replace")
        if bool_option(options, "wholetext", False):
            return pa.table({"value": pa.array([text], pa.string())})
        lines = re.split(r"\r\n|\r|\n", text)
        if lines and lines[-1] == "":
            lines.pop()
        return pa.table({"value": pa.array(lines, pa.string())})

    def write_file(self, table: "pa.Table", path: Path, options: dict[str, str]) -> None:
        import pyarrow as pa

        if table.num_columns != 1 or not (pa.types.is_string(table.schema[0].type)
                                          or pa.types.is_large_string(table.schema[0].type)):
            from console.sources.base import schema_text
            raise SourceError("format text saves exactly one string column; this table has: "
                              f"{schema_text(table.schema)}")
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(("" if v is None else v) + "\n" for v in table.column(0).to_pylist())


def unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for i, name in enumerate(names):
        name = name.strip() or f"_c{i}"
        if name in seen:
            seen[name] += 1
            name = f"{name}{seen[name]}"
        else:
            seen[name] = 0
        out.append(name)
    return out


def _json_value(value: Any) -> Any:
    # Spark writes binary as base64 text and dates/timestamps as ISO strings.
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return str(value)


# jsonStr and csvStr read the text of a variable rather than a file (Byzer's way to make example data).
from console.sources import inline  # noqa: E402,F401
