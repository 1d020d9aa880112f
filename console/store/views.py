"""A cell's saved result view: which way its result is shown (table or chart) and the chart's choices.

    {"mode": "table" | "chart",
     "chart": {"type": "bar" | "line" | "area" | "scatter" | "pie", "x": column | null,
               "y": [column, ...], "agg": "sum" | "avg" | "count" | "min" | "max" | "none",
               "group": column | null}}

Checked strictly wherever a view enters the store (the cell API, notebook import, a restored
revision): unknown keys, modes or chart types are refused, sizes are bounded. Columns are only
names here; the page falls back to its defaults when a result no longer has them.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from console.store.errors import Invalid

MODES = ("table", "chart")
CHART_TYPES = ("bar", "line", "area", "scatter", "pie")
AGGREGATES = ("sum", "avg", "count", "min", "max", "none")
MAX_Y = 16
MAX_NAME = 256
MAX_BYTES = 4096


def _column(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_NAME:
        raise Invalid(f"{where} must be a column name (1-{MAX_NAME} characters) or null, not {value!r:.60}")
    return value


def _one_of(value: Any, allowed: tuple[str, ...], where: str) -> str:
    if value not in allowed:
        raise Invalid(f"{where} must be one of {', '.join(allowed)}, not {value!r:.60}")
    return str(value)


def _keys(obj: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise Invalid(f"{where} has unknown key {unknown[0]!r:.60}; known: {', '.join(allowed)}")


def check_view(view: Any, where: str = "view") -> dict[str, Any] | None:
    """The view as stored (a fresh dict), None for none; Invalid naming what is wrong."""
    if view is None:
        return None
    if not isinstance(view, Mapping):
        raise Invalid(f"{where} must be an object or null")
    if len(json.dumps(view, default=str)) > MAX_BYTES:
        raise Invalid(f"{where} is larger than {MAX_BYTES} bytes")
    _keys(view, ("mode", "chart"), where)
    out: dict[str, Any] = {"mode": _one_of(view.get("mode", "table"), MODES, f"{where}.mode")}
    chart = view.get("chart")
    if chart is None:
        if out["mode"] == "chart":
            raise Invalid(f"{where}.chart is required when the mode is chart")
        return out
    if not isinstance(chart, Mapping):
        raise Invalid(f"{where}.chart must be an object")
    _keys(chart, ("type", "x", "y", "agg", "group"), f"{where}.chart")
    ys = chart.get("y", [])
    if not isinstance(ys, list) or len(ys) > MAX_Y:
        raise Invalid(f"{where}.chart.y must be a list of at most {MAX_Y} column names")
    out["chart"] = {
        "type": _one_of(chart.get("type"), CHART_TYPES, f"{where}.chart.type"),
        "x": _column(chart.get("x"), f"{where}.chart.x"),
        "y": [_column(y, f"{where}.chart.y[{i}]") for i, y in enumerate(ys) if y is not None],
        "agg": _one_of(chart.get("agg", "sum"), AGGREGATES, f"{where}.chart.agg"),
        "group": _column(chart.get("group"), f"{where}.chart.group"),
    }
    return out
