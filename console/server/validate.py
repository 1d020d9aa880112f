"""Request parsing for the API: a JSON object body and typed fields, with 400s that say what's wrong."""
from __future__ import annotations

import json
from typing import Any, Literal, overload

from flask import request

from console.server.errors import ApiError

_MISSING = object()
_TYPE_NAMES = {int: "an integer", str: "a string", list: "a list", dict: "an object", bool: "true or false"}


def json_body(required: bool = True) -> dict[str, Any]:
    """The request body as a JSON object ({} for an empty body when not required)."""
    raw = request.get_data(cache=True)  # raises 413 past MAX_CONTENT_LENGTH
    if not raw.strip():
        if required:
            raise ApiError(400, "request body must be a JSON object")
        return {}
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"request body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ApiError(400, "request body must be a JSON object")
    return data


def _typed(name: str, value: Any, kind: type) -> Any:
    # bool is an int in Python; a JSON true is never a revision number or a position.
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise ApiError(400, f"{name!r} must be {_TYPE_NAMES.get(kind, kind.__name__)}")
    return value


def field(body: dict[str, Any], name: str, kind: type, default: Any = _MISSING) -> Any:
    """body[name] checked against `kind`; missing -> default, or a 400 when there is none."""
    if name not in body or body[name] is None:
        if default is _MISSING:
            raise ApiError(400, f"{name!r} is required")
        return default
    return _typed(name, body[name], kind)


def query_int(name: str, default: Any = _MISSING) -> Any:
    """An integer from the query string (for DELETE, whose body some clients drop)."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        if default is _MISSING:
            raise ApiError(400, f"{name!r} is required")
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ApiError(400, f"{name!r} must be an integer") from exc


def query_bool(name: str) -> bool:
    return request.args.get(name, "").lower() in {"1", "true", "yes", "on"}


@overload
def base_revision(body: dict[str, Any]) -> int: ...
@overload
def base_revision(body: dict[str, Any], required: Literal[True]) -> int: ...
@overload
def base_revision(body: dict[str, Any], required: bool) -> int | None: ...
def base_revision(body: dict[str, Any], required: bool = True) -> int | None:
    """The revision the client's edit is based on: from the body, or the query string."""
    if "base_revision" in body and body["base_revision"] is not None:
        value: int = _typed("base_revision", body["base_revision"], int)
        return value
    return query_int("base_revision") if required else query_int("base_revision", None)
