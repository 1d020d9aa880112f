"""How an answer is compared with Spark's: values made JSON-like (floats to 6 places, dates as
ISO text, structs as dicts), rows sorted unless the snippet's order is part of its answer."""
from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any


def value(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, decimal.Decimal):
        return round(float(v), 6)
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dict):
        return {k: value(x) for k, x in v.items()}
    if hasattr(v, "asDict"):  # a pyspark Row (a struct value)
        return value(v.asDict(recursive=True))
    if isinstance(v, (list, tuple)):
        return [value(x) for x in v]
    raise TypeError(f"no comparison for {type(v).__name__}")


def answer(columns: list[str], rows: list[list[Any]], ordered: bool) -> dict[str, Any]:
    out = [[value(v) for v in row] for row in rows]
    if not ordered:
        out.sort(key=lambda r: json.dumps(r, sort_keys=True))
    return {"columns": [c.lower() for c in columns], "rows": out}
