"""One form for a value from either engine, so Spark's answers (collected by pyspark when the
goldens are made) and the local engine's (pyarrow's Python values) compare as equals.

Standard library only: the generator runs in a pyspark venv without the product's packages.
The Spark type (its JSON form, `DataType.jsonValue()`) says what a value is; the form is JSON:
integers and strings as is, floats as floats (NaN and infinities as text), decimals as text,
binary as hex, dates and timestamps as ISO text, intervals as Spark prints them, arrays as
lists, maps as [key, value] pairs, structs as the list of their field values.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from typing import Any

INTEGRAL = {"byte", "short", "integer", "long"}
FRACTIONAL = {"float", "double"}


def kind(dtype: Any) -> str:
    """The family of a Spark type: 'long', 'decimal', 'array', 'interval day to second', …"""
    if isinstance(dtype, dict):
        return str(dtype["type"])
    text = str(dtype)
    return "decimal" if text.startswith("decimal") else text


def normal(v: Any, dtype: Any) -> Any:
    """A value in the shared form, given its Spark type. Raises TypeError for a value that is not
    of that type's family (a string where Spark has a number is a different answer)."""
    if v is None:
        return None
    k = kind(dtype)
    if k == "boolean":
        return _expect(v, bool, k)
    if k in INTEGRAL:
        # DuckDB's sum of integers is a HUGEINT, which Arrow carries as a decimal of scale 0
        if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
            return int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{v!r} is not {k}")
        return v
    if k in FRACTIONAL or k == "decimal":
        if isinstance(v, bool) or not isinstance(v, (int, float, decimal.Decimal)):
            raise TypeError(f"{v!r} is not {k}")
        if k == "decimal":  # by value: 1.50 is 1.5 (a double where Spark has a decimal, too)
            d = decimal.Decimal(repr(v)) if isinstance(v, float) else decimal.Decimal(v)
            return format(d.normalize(), "f") if d.is_finite() else str(d)
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return f
    if k in ("string", "char", "varchar") or k.startswith(("char(", "varchar(")):
        return _expect(v, str, k)
    if k == "binary":
        if not isinstance(v, (bytes, bytearray)):
            raise TypeError(f"{v!r} is not binary")
        return bytes(v).hex()
    if k == "date":
        if isinstance(v, dt.datetime) or not isinstance(v, dt.date):
            raise TypeError(f"{v!r} is not a date")
        return v.isoformat()
    if k in ("timestamp", "timestamp_ntz"):
        if not isinstance(v, dt.datetime):
            raise TypeError(f"{v!r} is not a timestamp")
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat(sep=" ")
    if k.startswith("interval") or k == "calendarinterval":
        return _expect(v, str, k)  # the generator casts intervals to text; the test formats ours
    if k == "array":
        if not isinstance(v, (list, tuple)):
            raise TypeError(f"{v!r} is not an array")
        return [normal(x, dtype["elementType"]) for x in v]
    if k == "map":
        pairs = list(v.items()) if isinstance(v, dict) else list(v)
        out = [[normal(a, dtype["keyType"]), normal(b, dtype["valueType"])] for a, b in pairs]
        return sorted(out, key=lambda pair: json.dumps(pair))  # entries in any order
    if k == "struct":
        fields = dtype["fields"]
        if hasattr(v, "asDict"):  # a pyspark Row
            v = list(v)
        elif isinstance(v, dict):
            v = list(v.values())
        if not isinstance(v, (list, tuple)) or len(v) != len(fields):
            raise TypeError(f"{v!r} is not a struct of {len(fields)} fields")
        return [normal(x, f["type"]) for x, f in zip(v, fields, strict=True)]
    if k == "void":
        raise TypeError(f"{v!r} where Spark has NULL")
    raise TypeError(f"no comparison for Spark type {k}")


def _expect(v: Any, cls: type, k: str) -> Any:
    if not isinstance(v, cls):
        raise TypeError(f"{v!r} is not {k}")
    return v


def same(a: Any, b: Any) -> bool:
    """Two values in the shared form are the same answer (floats within a relative 1e-9)."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b

