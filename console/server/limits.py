"""The largest values the API takes, where the store sets them: integers are 64-bit signed.

A URL's <int:...> part longer than that matches no route (404) instead of reaching the database
and failing there (OverflowError, a 500); console/server/validate.py checks bodies and queries.
"""
from __future__ import annotations

from typing import Any

from flask import Flask
from werkzeug.routing import IntegerConverter

INT_MAX = 2**63 - 1  # SQLite INTEGER, PostgreSQL bigint
INT_MIN = -(2**63)


class BoundedInt(IntegerConverter):
    """<int:...> that fits the store's integers."""

    def __init__(self, map: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max", INT_MAX)
        super().__init__(map, *args, **kwargs)


def install_converters(app: Flask) -> None:
    """Make every <int:...> route bounded; call before the blueprints are registered."""
    app.url_map.converters["int"] = BoundedInt
