"""The schema of a file the data panel lists, in Spark's type names (console/coltypes.py).

CSV, TSV and JSON lines are text: read here, from the file's first MiB (lake_read.head: no link
followed), with the options the panel's `load` uses (header and inferSchema for CSV), so the
columns are what that load gives, inferred from the head as the load infers from the whole file.
Parquet and Excel are binary, and the server decodes no binary a cell may have written
(lake_read.py): those are asked of the notebook's session, whose kernel reads them as `load`
does; without a running session the answer says to run a cell.
"""
from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from console.coltypes import columns
from console.server import lake_read

SAMPLE_BYTES = 1 << 20
_CSV = {".csv": ",", ".tsv": "\t"}
_JSON = (".json", ".jsonl", ".ndjson")
_SESSION = (".parquet", ".parq", ".xlsx")

Ask = Callable[[str, dict[str, Any]], dict[str, Any]]  # a query of the notebook's kernel (KernelManager.query)


class NoFile(LookupError):
    """The path names no plain file of the lake (gone, a folder, a link)."""


def file_schema(lake: Path, parts: tuple[str, ...], ask: Ask) -> dict[str, Any]:
    """{"columns": [{"name", "type"}] or None, "format", "sampled"?, "note"?}; NoFile when it is none."""
    path = "/".join(parts)
    ext = os.path.splitext(parts[-1])[1].lower()
    got = lake_read.head(lake, parts, SAMPLE_BYTES if ext in _CSV or ext in _JSON else 0)
    if got is None:
        raise NoFile(f"no file {path!r} in the lake")
    if ext in _CSV or ext in _JSON:
        data, size = got
        sampled = size > len(data)
        if sampled:  # the head ends inside a line: that line is left out
            data = data[:data.rfind(b"\n") + 1]
        fmt = "csv" if ext in _CSV else "json"
        try:
            cols = _csv(data, _CSV[ext]) if fmt == "csv" else _json(data)
        except Exception as exc:  # the user's data: its error is the answer, not the server's fault
            return {"format": fmt, "columns": None, "note": f"its columns cannot be read: {_first_line(exc)}"}
        return {"format": fmt, "columns": cols, "sampled": sampled}
    if ext == ".txt":
        return {"format": "text", "columns": [{"name": "value", "type": "string"}]}
    if ext in _SESSION:
        fmt = "excel" if ext == ".xlsx" else "parquet"
        try:
            answer = ask("file_schema", {"path": path})
        except (LookupError, TimeoutError) as exc:
            not_running = "not running" in str(exc)
            return {"format": fmt, "columns": None, "note": (
                "run a cell to start this notebook's session: it reads the columns of Parquet and Excel files"
                if not_running else _first_line(exc))}
        return {"format": fmt, "columns": answer.get("columns") or []}
    return {"format": None, "columns": None, "note": "not a format `load` reads by its name"}


def _csv(data: bytes, sep: str) -> list[dict[str, str]]:
    import pyarrow.csv as pcsv

    text = data.decode("utf-8", "replace")
    first = next(csv.reader(io.StringIO(text), delimiter=sep), None)
    if not first:
        return []
    names = _unique(first)
    table = pcsv.read_csv(io.BytesIO(data), read_options=pcsv.ReadOptions(column_names=names, skip_rows=1),
                          parse_options=pcsv.ParseOptions(delimiter=sep),
                          convert_options=pcsv.ConvertOptions(null_values=[""], strings_can_be_null=True))
    return columns(table.schema)


def _json(data: bytes) -> list[dict[str, str]]:
    import pyarrow.json as pjson

    if not data.strip():
        return []
    return columns(pjson.read_json(io.BytesIO(data)).schema)


def _unique(names: list[str]) -> list[str]:
    from console.sources.formats import unique_names as unique  # the load's own naming of repeated headers

    out: list[str] = unique(names)
    return out


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().split("\n", 1)[0] or type(exc).__name__)[:300]
