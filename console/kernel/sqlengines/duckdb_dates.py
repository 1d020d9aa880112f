"""Spark's date and time functions over text: Spark casts a text argument (a CSV column, a
literal) to a date or timestamp, and an unreadable one gives NULL (ANSI mode off); DuckDB's
functions take no text (a binder error) or fail the query on a bad value. Each rewrite gives
the function the value Spark would, by TRY_CAST.

`rewrite(node)` returns the replacement, or None when the node is not one of these; the other
functions here are duckdb_functions' handlers for dates that stay dates and the like.
"""
from __future__ import annotations

from sqlglot import exp

from console.kernel.sqlengines.spark import Untranslatable

ENGINE = "DuckDB"

_TIMESTAMP_PART = (exp.Hour, exp.Minute, exp.Second, exp.Quarter, exp.LastDay)
_DATE_PART = (exp.Year, exp.Month, exp.DayOfYear, exp.DayOfMonth, exp.WeekOfYear, exp.DayOfWeek)
_TEMPORAL = {exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ,
             exp.DataType.Type.TIMESTAMPNTZ, exp.DataType.Type.DATETIME}
_MADE_TEMPORAL = (exp.CurrentDate, exp.CurrentTimestamp, exp.StrToTime, exp.StrToDate, exp.TsOrDsToDate,
                  exp.UnixToTime, exp.DateTrunc, exp.TimestampTrunc, exp.TsOrDsAdd, exp.AddMonths)


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _temporal(node: exp.Expr) -> bool:
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.this in _TEMPORAL
    return isinstance(node, _MADE_TEMPORAL)


def _readable(node: exp.Expr, kind: str) -> exp.Expr | None:
    value = node.this
    if value is None or _temporal(value) or isinstance(value, exp.Null):
        return None
    node.set("this", exp.TryCast(this=value, to=exp.DataType.build(kind)))
    return node


def as_date(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    """date_add, date_sub, add_months and trunc give a DATE in Spark (DuckDB: a timestamp)."""
    if isinstance(node, exp.TsOrDsAdd) and str(node.args.get("unit") or "DAY").upper() not in ("DAY", "'DAY'"):
        return None
    if isinstance(node.parent, exp.Cast):
        return None
    return exp.Cast(this=node, to=exp.DataType.build("DATE"))


def from_utc(node: exp.AtTimeZone, numeric: frozenset[str]) -> exp.Expr | None:
    """from_utc_timestamp(ts, tz): ts is UTC, the answer its wall time in tz (Spark SQL has no AT
    TIME ZONE, so the node is this function's)."""
    utc = exp.AtTimeZone(this=node.this, zone=exp.Literal.string("UTC"))
    return exp.AtTimeZone(this=utc, zone=node.args["zone"])


def date_plus_interval(node: exp.Add, numeric: frozenset[str]) -> exp.Expr | None:
    """DATE '…' + INTERVAL n DAY|MONTH|YEAR is a DATE in Spark (DuckDB: a timestamp)."""
    left, right = node.this, node.expression
    if (isinstance(left, exp.Cast) and left.to.this == exp.DataType.Type.DATE and isinstance(right, exp.Interval)
            and str(right.unit.name if right.unit else "").upper() in ("DAY", "DAYS", "WEEK", "MONTH", "YEAR")):
        return exp.Cast(this=exp.Paren(this=node), to=exp.DataType.build("DATE"))
    return None


def seconds(node: exp.Expr, unit: str, value: exp.Expr) -> exp.Expr | None:
    """extract(SECOND …) carries the fraction in Spark (a DECIMAL(8,6)); DuckDB's is whole seconds."""
    if unit.strip("'").upper() not in ("SECOND", "SECONDS", "S", "SEC", "SECS"):
        return None
    micros = _fn("DATE_PART", exp.Literal.string("microseconds"), value.copy())
    return exp.Cast(this=exp.Div(this=micros, expression=exp.Literal.number(1000000)),
                    to=exp.DataType.build("DECIMAL(8, 6)"))


def _interval_cast(node: exp.Cast) -> None:
    """Spark's year-month and day-time interval types read and print their own forms ('3-1',
    INTERVAL '3-1' YEAR TO MONTH); DuckDB has one interval type and reads '3-1' as NULL: refused."""
    target = node.to.this
    if isinstance(target, exp.Interval) and target.args.get("unit") is not None:
        raise Untranslatable(f"a cast to INTERVAL {target.args['unit'].sql('spark')}", ENGINE,
                             "DuckDB has no year-month or day-time interval types; use make_interval or date_add")
    if node.to.this in (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR) and isinstance(node.this, exp.Interval):
        raise Untranslatable("an interval cast to text", ENGINE, "Spark prints INTERVAL '2' DAY, DuckDB 2 days")


def rewrite(node: exp.Expr) -> exp.Expr | None:
    if isinstance(node, (exp.Cast, exp.TryCast)):
        _interval_cast(node)
    if isinstance(node, _TIMESTAMP_PART):
        return _readable(node, "TIMESTAMP")
    if isinstance(node, _DATE_PART):
        return _readable(node, "DATE")
    if isinstance(node, exp.Anonymous) and str(node.name).lower() == "weekday" and len(node.expressions) == 1:
        value = node.expressions[0]  # Spark: Monday is 0 (DuckDB's weekday: Sunday is 0)
        day = value if _temporal(value) else exp.TryCast(this=value, to=exp.DataType.build("DATE"))
        return exp.Paren(this=exp.Sub(this=exp.Anonymous(this="ISODOW", expressions=[day]),
                                      expression=exp.Literal.number(1)))
    if isinstance(node, exp.Extract) and node.this.name.upper() in ("DOW", "DAYOFWEEK"):
        return exp.Paren(this=exp.Add(this=node, expression=exp.Literal.number(1)))  # Spark: Sunday is 1
    if isinstance(node, (exp.StrToTime, exp.StrToDate, exp.TsOrDsToDate)) and not node.args.get("safe"):
        node.set("safe", True)  # a text that does not fit the pattern is NULL, not a failed query
        return None  # its pattern is still duckdb.py's to convert
    if (isinstance(node, exp.Cast) and node.to.this in _TEMPORAL
            and not (isinstance(node.this, exp.Literal) and node.this.is_string)):
        # a cast sqlglot made (to_timestamp(s)): NULL for bad text; TIMESTAMP 'bad' stays an error, as in Spark
        return exp.TryCast(this=node.this, to=node.to)
    return None
