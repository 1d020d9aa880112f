"""A table as the browser sees it: the first rows as JSON-safe values, the row count, the column types."""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from pathlib import Path
from typing import Any, Mapping

import pyarrow as pa

from console.messages import ResultEvent

_MAX_ITEMS = 100       # list cells longer than this are cut (an MNIST image is 784 numbers)
_MAX_INLINE_BYTES = 48  # longer binary values show as a size, not as their bytes


def json_safe(value: Any) -> Any:
    """A value json.dumps accepts and a person can read: dates as ISO text, bytes as base64 or a size."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) <= _MAX_INLINE_BYTES:
            return "base64:" + base64.b64encode(raw).decode("ascii")
        return f"<{len(raw)} bytes>"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [json_safe(v) for v in value[:_MAX_ITEMS]]
        if len(value) > _MAX_ITEMS:
            items.append(f"… {len(value) - _MAX_ITEMS} more")
        return items
    return str(value)


def result_event(name: str, table: pa.Table, max_rows: int) -> ResultEvent:
    """The ResultEvent for `table`; only the first max_rows rows are converted to Python."""
    head = table.slice(0, max_rows)
    columns = head.to_pydict() if head.num_rows else {c: [] for c in head.column_names}
    values = list(columns.values())
    # Columns may repeat a name (select a, a); to_pydict keeps one, so fall back to positions.
    if len(values) != head.num_columns:
        values = [head.column(i).to_pylist() for i in range(head.num_columns)]
    # Integers, strings and booleans are JSON-safe as they come: skip the per-value walk for them.
    plain = [pa.types.is_integer(f.type) or pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
             or pa.types.is_boolean(f.type) for f in head.schema]
    values = [col if ok else [json_safe(v) for v in col] for col, ok in zip(values, plain, strict=True)]
    rows = [list(row) for row in zip(*values, strict=True)] if values else [[] for _ in range(head.num_rows)]
    cols = [{"name": f.name, "type": str(f.type)} for f in table.schema]
    return ResultEvent(name=name, columns=cols, rows=rows, total_rows=table.num_rows)


def format_table(event: ResultEvent, max_width: int = 40) -> str:
    """A compact text table for the headless runner and the golden files."""
    def cell(v: Any) -> str:
        text = "NULL" if v is None else str(v)
        text = text.replace("\n", "\\n")
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

    Only the latest result per cell is kept (a re-run replaces it); the kernel's restart clears
    them with the session.
    """

    def __init__(self, cfg: Any, spill_dir: Path) -> None:
        self.cfg = cfg
        self.spill_dir = spill_dir
        self._kept: dict[str, tuple[str, pa.Table]] = {}

    def keep(self, cell: str, name: str, table: pa.Table) -> None:
        self._kept[cell] = (name, table)

    def get(self, cell: str) -> tuple[str, pa.Table]:
        try:
            return self._kept[cell]
        except KeyError:
            raise LookupError(f"no result is kept for cell {cell}; run the cell again") from None


def page(session: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """args: cell, offset, limit, sort ([[column, "asc"|"desc"], …]). Answer: a ResultEvent's fields."""
    name, table = session.results.get(str(args.get("cell", "")))
    sort = [(str(c), "descending" if str(d).lower().startswith("desc") else "ascending")
            for c, d in args.get("sort") or []]
    missing = [c for c, _ in sort if c not in table.column_names]
    if missing:
        raise ValueError(f"no column {missing[0]!r} in the result")
    if sort:
        table = table.sort_by(sort)
    offset = max(0, int(args.get("offset", 0)))
    limit = max(0, min(int(args.get("limit", 100)), 10_000))
    event = result_event(name, table.slice(offset), limit)
    return {"name": event.name, "columns": event.columns, "rows": event.rows, "total_rows": table.num_rows,
            "offset": offset}
