"""DuckDB's interval values as Spark prints an interval of the given type (its `CAST(… AS STRING)`),
so the two engines' intervals compare as text: `INTERVAL '3-1' YEAR TO MONTH`,
`INTERVAL '1 02:03:04' DAY TO SECOND`."""
from __future__ import annotations

from typing import Any

_YM = ("year", "month")
_DT = ("day", "hour", "minute", "second")


def spark_text(v: Any, spark_type: str) -> str:
    """v: pyarrow's MonthDayNano (months, days, nanoseconds) or a timedelta."""
    import datetime as dt

    if isinstance(v, dt.timedelta):
        months, days, nanos = 0, v.days, (v.seconds * 1_000_000 + v.microseconds) * 1000
    elif hasattr(v, "months"):
        months, days, nanos = int(v.months), int(v.days), int(v.nanoseconds)
    else:
        raise TypeError(f"{v!r} is not an interval")
    parts = spark_type.removeprefix("interval ").split(" to ")
    start, end = parts[0], parts[-1]
    if start in _YM:
        if days or nanos:
            raise TypeError(f"{v!r} is not a year-month interval")
        sign = "-" if months < 0 else ""
        m = abs(months)
        body = {("year", "year"): f"{m // 12}", ("month", "month"): f"{m}",
                ("year", "month"): f"{m // 12}-{m % 12}"}[(start, end)]
        return f"INTERVAL '{sign}{body}' {start.upper()}" + (f" TO {end.upper()}" if end != start else "")
    if months:
        raise TypeError(f"{v!r} is not a day-time interval")
    micros = days * 86_400_000_000 + nanos // 1000
    sign = "-" if micros < 0 else ""
    micros = abs(micros)
    fields = {"day": micros // 86_400_000_000, "hour": micros // 3_600_000_000,
              "minute": micros // 60_000_000, "second": micros // 1_000_000}
    rest = {"hour": micros // 3_600_000_000 % 24, "minute": micros // 60_000_000 % 60,
            "second": micros // 1_000_000 % 60}
    frac = micros % 1_000_000
    out = []
    for i, name in enumerate(_DT[_DT.index(start):_DT.index(end) + 1]):
        value = fields[name] if i == 0 else rest[name]
        text = f"{value}" if i == 0 else f"{value:02d}"
        if name == "second" and frac:
            text += f".{frac:06d}".rstrip("0")
        out.append(text)
    body = out[0] if len(out) == 1 else out[0] + " " + ":".join(out[1:]) if start == "day" else ":".join(out)
    return f"INTERVAL '{sign}{body}' {start.upper()}" + (f" TO {end.upper()}" if end != start else "")
