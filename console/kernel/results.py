"""A table as the browser sees it, and each cell's whole last result for paging, sorting and download.

Values the browser cannot show as plain JSON travel as small objects with a "$" key naming what
they are (see `json_safe`), so the page draws them readably instead of printing a Python repr.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import re
import shutil
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Mapping

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from console import coltypes
from console.kernel.catalog import Entry, LazyTable, as_table, memory_bytes
from console.wire.cell import Result

_MAX_ITEMS = 100        # list cells longer than this are cut (an MNIST image is 784 numbers)
_MAX_INLINE_BYTES = 48  # binary values up to this size travel whole (base64); longer ones as size + head
_SAFE_INT = 2 ** 53     # beyond this a JavaScript number is no longer exact
MAX_PAGE_ROWS = 10_000
DOWNLOAD_FORMATS = ("csv", "parquet")
# The server names each download file; the kernel writes only a name of this shape into its own
# cache folder, so a request cannot make it write anywhere else.
DOWNLOAD_NAME = re.compile(r"^[0-9a-f]{32}$")
DOWNLOADS_DIR = "downloads"
SPILL_DIR = "results"


def _marker(kind: str, **fields: Any) -> dict[str, Any]:
    return {"$": kind, **fields}


def json_safe(value: Any) -> Any:
    """A value json.dumps accepts and a person can read.

    Plain JSON where that is exact; otherwise a marker object {"$": kind, ...}:
    int/decimal {"text"} (exact digits), float {"text": "NaN"|"Infinity"|"-Infinity"},
    binary {"size", "base64"} (whole when small) or {"size", "hex"} (the first bytes),
    list {"items", "more"} (a cut list), map {"value"} (a mapping whose own key is "$").
    Dates and times are ISO text, durations text.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if -_SAFE_INT <= value <= _SAFE_INT else _marker("int", text=str(value))
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return _marker("float", text="NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"))
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) <= _MAX_INLINE_BYTES:
            return _marker("binary", size=len(raw), base64=base64.b64encode(raw).decode("ascii"))
        return _marker("binary", size=len(raw), hex=raw[:16].hex())
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, decimal.Decimal):
        if value.is_finite() and value == value.to_integral_value() and abs(value) <= _SAFE_INT:
            return int(value)
        return _marker("decimal", text=str(value))
    if isinstance(value, dict):
        out = {str(k): json_safe(v) for k, v in value.items()}
        return _marker("map", value=out) if "$" in out else out
    if isinstance(value, (list, tuple)):
        items = [json_safe(v) for v in value[:_MAX_ITEMS]]
        if len(value) > _MAX_ITEMS:
            return _marker("list", items=items, more=len(value) - _MAX_ITEMS)
        return items
    return str(value)


def _plain(column: pa.ChunkedArray) -> bool:
    """Whether a column's Python values are already exact JSON (no per-value walk needed)."""
    t = column.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_boolean(t):
        return True
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        # Finite doubles are plain JSON; NaN and the infinities need markers.
        return len(column) == 0 or pc.all(pc.is_finite(column)).as_py() is not False
    if not pa.types.is_integer(t):
        return False
    if t.bit_width <= 32:
        return True
    bounds = pc.min_max(column)
    lo, hi = bounds["min"].as_py(), bounds["max"].as_py()
    return lo is None or (-_SAFE_INT <= lo and hi <= _SAFE_INT)


def result_event(name: str, table: Entry, max_rows: int) -> Result:
    """The Result for `table`; only the first max_rows rows are converted to Python (and,
    for a loaded table still on disk, decoded)."""
    head = table.slice(0, max_rows)
    # Columns may repeat a name (select a, a), so they are taken by position.
    values = []
    for i in range(head.num_columns):
        col = head.column(i)
        py = col.to_pylist()
        values.append(py if _plain(col) else [json_safe(v) for v in py])
    rows = [list(row) for row in zip(*values, strict=True)] if values else [[] for _ in range(head.num_rows)]
    cols = coltypes.columns(table.schema)  # Spark's type names, whichever engine made the table
    return Result(name=name, columns=cols, rows=rows, total_rows=table.num_rows)


def _text(v: Any) -> str:
    """A json_safe value as one line of text (headless runner, golden files)."""
    if v is None:
        return "NULL"
    if isinstance(v, dict) and "$" in v:
        kind = v["$"]
        if kind == "binary":
            return f"<{v['size']} bytes>"
        if kind == "list":
            return "[" + ", ".join(_text(x) for x in v["items"]) + f", … {v['more']} more]"
        if kind == "map":
            return _text(v["value"])
        return str(v.get("text", ""))
    if isinstance(v, list):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_text(x)}" for k, x in v.items()) + "}"
    return str(v)


def format_table(event: Result, max_width: int = 40) -> str:
    """A compact text table for the headless runner and the golden files."""
    def cell(v: Any) -> str:
        text = _text(v).replace("\n", "\\n")
        return text if len(text) <= max_width else text[: max_width - 1] + "…"

    header = [c["name"] for c in event.columns]
    body = [[cell(v) for v in row] for row in event.rows]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]
    line = " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [line.rstrip(), "-+-".join("-" * w for w in widths)]
    out += [" | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in body]
    more = event.total_rows - len(event.rows)
    summary = f"({event.total_rows} row{'s' if event.total_rows != 1 else ''}"
    summary += f", {more} not shown)" if more > 0 else ")"
    return "\n".join(out + [summary])


class ResultCache:
    """Each cell's whole last result, so the page can ask for any range, sorted, or download it.

    Only the latest result per cell is kept (a re-run replaces it). Results stay in memory up to
    cfg.RESULT_KEEP_BYTES together; beyond that the least recently used ones are written to
    <cache_dir>/results/ as Arrow IPC files and memory-mapped when asked for again, so a page of
    a spilled result costs a file map, not the kernel's memory. A new kernel starts empty: the
    files of the previous one are removed.
    """

    def __init__(self, cfg: Any, spill_dir: Path) -> None:
        self.cfg = cfg
        self.spill_dir = spill_dir / SPILL_DIR
        self.limit = int(getattr(cfg, "RESULT_KEEP_BYTES", 256 * 1024 * 1024))
        self._kept: OrderedDict[str, tuple[str, Entry]] = OrderedDict()  # oldest use first
        self._spilled: dict[str, tuple[str, Path]] = {}
        self._lock = threading.Lock()  # keep() runs on the cell's thread, get() on the query thread
        shutil.rmtree(self.spill_dir, ignore_errors=True)

    def keep(self, cell: str, name: str, table: Entry) -> None:
        with self._lock:
            self._forget(cell)
            self._kept[cell] = (name, table)
            self._spill_beyond_limit()

    def get(self, cell: str) -> tuple[str, Entry]:
        with self._lock:
            if cell in self._kept:
                self._kept.move_to_end(cell)
                return self._kept[cell]
            if cell in self._spilled:
                name, path = self._spilled[cell]
                return name, ipc.open_file(pa.memory_map(str(path))).read_all()
        raise LookupError(f"no result is kept for cell {cell}; run the cell again")

    def spilled(self, cell: str) -> bool:
        with self._lock:
            return cell in self._spilled

    def _forget(self, cell: str) -> None:
        self._kept.pop(cell, None)
        old = self._spilled.pop(cell, None)
        if old is not None:
            old[1].unlink(missing_ok=True)

    def _spill_beyond_limit(self) -> None:
        used = sum(memory_bytes(t) for _, t in self._kept.values())
        # The newest result stays in memory even alone over the limit: it is the one being looked at.
        # A loaded table still on disk costs nothing here and is never written out.
        for cell in list(self._kept)[:-1]:
            if used <= self.limit:
                break
            name, entry = self._kept[cell]
            if memory_bytes(entry) == 0:
                continue
            table = as_table(entry)
            del self._kept[cell]
            self.spill_dir.mkdir(parents=True, exist_ok=True)
            path = self.spill_dir / f"{re.sub(r'[^A-Za-z0-9_-]', '_', cell)}.arrow"
            with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
            self._spilled[cell] = (name, path)
            used -= table.nbytes


def _sorted(table: Entry, sort: Any) -> Entry:
    """`table` sorted by [[column, "asc"|"desc"], …]; ValueError naming a column it does not have."""
    if sort is None:
        return table
    if not isinstance(sort, list) or len(sort) > 16:
        raise ValueError("sort must be a list of at most 16 [column, \"asc\"|\"desc\"] pairs")
    keys = []
    for item in sort:
        if not isinstance(item, (list, tuple)) or len(item) != 2 or str(item[1]).lower() not in ("asc", "desc"):
            raise ValueError(f"sort item {item!r} must be [column, \"asc\"|\"desc\"]")
        column = str(item[0])
        if column not in table.column_names:
            raise ValueError(f"no column {column!r} in the result; it has {', '.join(table.column_names)}")
        keys.append((column, "descending" if str(item[1]).lower() == "desc" else "ascending"))
    if not keys:
        return table
    try:
        return as_table(table).sort_by(keys)
    except pa.ArrowNotImplementedError as exc:  # lists and structs have no order
        raise ValueError(f"cannot sort by {keys[0][0]!r}: {exc}") from None


def _int(args: Mapping[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be an integer")
    return value


def page(session: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """args: cell, offset, limit, sort ([[column, "asc"|"desc"], …]). Answer: a Result's fields + offset."""
    name, table = session.results.get(str(args.get("cell", "")))
    table = _sorted(table, args.get("sort"))
    offset = min(max(0, _int(args, "offset", 0)), table.num_rows)
    limit = max(0, min(_int(args, "limit", 100), MAX_PAGE_ROWS))
    event = result_event(name, table.slice(offset, limit), limit)
    return {"name": event.name, "columns": event.columns, "rows": event.rows, "total_rows": table.num_rows,
            "offset": offset}


def download_path(cache_dir: Path, name: str, fmt: str) -> Path:
    """Where a download named `name` is written: <cache_dir>/downloads/<name>.<fmt>.

    The server computes the same path from its own settings; it never takes one from the kernel.
    """
    if fmt not in DOWNLOAD_FORMATS:
        raise ValueError(f"format must be one of {', '.join(DOWNLOAD_FORMATS)}, not {fmt!r}")
    if not isinstance(name, str) or not DOWNLOAD_NAME.match(name):
        raise ValueError("a download name is 32 lowercase hex digits")
    return cache_dir / DOWNLOADS_DIR / f"{name}.{fmt}"


def _csv_ready(table: pa.Table) -> pa.Table:
    """Columns CSV has no form for (lists, structs, maps, binary) as readable text, the rest as they are."""
    fixed = []
    for i, f in enumerate(table.schema):
        t = f.type
        if pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t) \
                or pa.types.is_fixed_size_binary(t):
            text = [None if v is None else _cell_text(v) for v in table.column(i).to_pylist()]
            fixed.append(pa.array(text, pa.string()))
        else:
            fixed.append(table.column(i))
    return pa.table(fixed, names=table.column_names)


def _cell_text(v: Any) -> str:
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()  # the whole value: a download is the data, not a preview
    import json

    return json.dumps(v, default=str, ensure_ascii=False)


def result_file(session: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """args: cell, format ("csv" | "parquet"), name (chosen by the server), sort. Writes the WHOLE
    result to download_path(session.cache_dir, name, format); answers its rows and bytes."""
    fmt = str(args.get("format", ""))
    path = download_path(session.cache_dir, args.get("name", ""), fmt)
    name, table = session.results.get(str(args.get("cell", "")))
    table = _sorted(table, args.get("sort"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    # A batch at a time: a loaded table still on disk is decoded as it is written, never whole.
    batches = table.batches() if isinstance(table, LazyTable) else table.to_batches()
    first = _csv_ready(table.schema.empty_table()) if fmt == "csv" else None
    with (pacsv.CSVWriter(str(tmp), first.schema) if first is not None
          else pq.ParquetWriter(str(tmp), table.schema)) as writer:
        for batch in batches:
            part = pa.Table.from_batches([batch], table.schema)
            writer.write_table(_csv_ready(part) if first is not None else part)
    tmp.replace(path)  # the server never sees a half-written file
    return {"name": name, "rows": table.num_rows, "bytes": path.stat().st_size, "format": fmt}
