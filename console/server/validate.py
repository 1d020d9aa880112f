"""Request parsing for the API: a JSON object body and typed fields, with 400s that say what's wrong.

Whatever a client sends is refused here with a 4xx rather than failing deeper as a 500: JSON nested
deeper than MAX_DEPTH, a string holding a lone surrogate (it cannot be stored as UTF-8), an integer
outside the database's 64-bit range (in the body, the query string or a URL's <int:...> part).
"""
from __future__ import annotations

import dataclasses
import json
import re
import types
from collections.abc import Callable
from typing import Any, Literal, TypeVar, get_type_hints, overload

from flask import current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from console.server.errors import ApiError
from console.server.limits import INT_MAX, INT_MIN
from console.store import Invalid
from console.store.views import check_view

_MISSING = object()
MAX_DEPTH = 64                      # far deeper than any notebook file; json.loads recurses per level
_SURROGATE = re.compile("[\ud800-\udfff]")
_TYPE_NAMES = {int: "an integer", str: "a string", list: "a list", dict: "an object", bool: "true or false"}


def json_body(required: bool = True) -> dict[str, Any]:
    """The request body as a JSON object ({} for an empty body when not required)."""
    raw = request.get_data(cache=True)  # raises 413 when a Content-Length is past MAX_CONTENT_LENGTH
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if request.content_length is None and limit is not None and len(raw) >= limit:
        # A chunked body has no length to check up front: Werkzeug stops reading at the limit and
        # returns what it has, which would be parsed as if it were the whole body.
        raise RequestEntityTooLarge()
    if not raw.strip():
        if required:
            raise ApiError(400, "request body must be a JSON object")
        return {}
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"request body is not valid JSON: {exc}") from exc
    except RecursionError as exc:  # json.loads recurses once per level: 100,000 levels end here
        raise ApiError(400, f"request body is nested deeper than {MAX_DEPTH} levels") from exc
    if not isinstance(data, dict):
        raise ApiError(400, "request body must be a JSON object")
    _check_values(data)
    return data


def _check_values(value: Any, where: str = "body", depth: int = 0) -> None:
    """Nesting within MAX_DEPTH; every string storable as UTF-8 (no lone surrogate); every integer 64-bit."""
    if depth > MAX_DEPTH:
        raise ApiError(400, f"request body is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise ApiError(400, f"{where} holds a lone surrogate (U+D800-U+DFFF), which is not valid Unicode text")
    elif isinstance(value, bool):
        return
    elif isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise ApiError(400, f"{where} is an integer outside the 64-bit range")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_values(key, where, depth + 1)
            _check_values(item, f"{key!r}" if where == "body" else where, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_values(item, where, depth + 1)


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
        value = int(raw)
    except ValueError as exc:
        raise ApiError(400, f"{name!r} must be an integer") from exc
    if not INT_MIN <= value <= INT_MAX:
        raise ApiError(400, f"{name!r} is an integer outside the 64-bit range")
    return value


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



def cell_view(body: dict[str, Any]) -> dict[str, Any] | None:
    """body["view"]: a cell's result view, checked strictly (console/store/views.py); null clears it."""
    try:
        return check_view(body.get("view"))
    except Invalid as exc:
        raise ApiError(400, exc.message) from None


# ---------------------------------------------------------------- typed bodies

B = TypeVar("B")
# Each typed body (@typed_body) by the endpoint it is the body of ("POST /api/folders"): docs/api.md's row for
# that endpoint lists exactly its fields, `name?` for one with a default (tests/test_docs.py).
BODIES: dict[str, type] = {}


def typed_body(endpoint: str) -> Callable[[type[B]], type[B]]:
    """A class decorator: the dataclass is `endpoint`'s body, decoded by body_as()."""
    def register(cls: type[B]) -> type[B]:
        BODIES[endpoint] = cls
        return cls
    return register


def _kind(annotation: Any) -> type:
    """str for `str` and `str | None`, and so on: the JSON type field() checks."""
    options = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)] \
        if isinstance(annotation, types.UnionType) else [annotation]
    kind = getattr(options[0], "__origin__", options[0])
    assert len(options) == 1 and kind in _TYPE_NAMES, f"no JSON type for {annotation!r}"
    return kind


def body_as(cls: type[B], required: bool = True) -> B:
    """The request body as dataclass `cls` (a @typed_body): a field without a default is required; each
    is checked by field() against its annotation, with field()'s words; a name `cls` does not
    declare is a 400 that lists the ones it does."""
    data = json_body(required)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = [json_name(f) for f in fields]
    unknown = sorted(str(k)[:40] for k in set(data) - set(names))
    if unknown:
        raise ApiError(400, f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                            f"this body takes {', '.join(names)}")
    hints = get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in fields:
        if f.metadata.get("null"):  # NULLABLE: the JSON value as it came (null too), checked by its endpoint
            values[f.name] = data.get(json_name(f), ABSENT)
        else:
            values[f.name] = field(data, json_name(f), _kind(hints[f.name]),
                                   _MISSING if f.default is dataclasses.MISSING else f.default)
    return cls(**values)


class Absent:
    """A typed body's field the JSON left out, where its null means something of its own (NULLABLE)."""


    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = Absent()
# A field whose JSON null is a value (a cell's view: null clears it), told apart from leaving it out:
# body_as() hands over the JSON value as it came, or ABSENT, and the endpoint checks it.
NULLABLE: Any = dataclasses.field(default=ABSENT, metadata={"null": True})


def json_name(f: dataclasses.Field[Any]) -> str:
    """A field's name in the JSON body: its own, or `metadata["json"]` where that is a Python keyword (`from`)."""
    return str(f.metadata.get("json", f.name))


def documented_form(cls: type) -> list[str]:
    """The body's fields as docs/api.md writes them: `name`, or `name?` when it may be left out (a
    base revision that may come in the query string instead is written as required)."""
    return [json_name(f) + ("" if f.default is dataclasses.MISSING or f.metadata.get("or_query") else "?")
            for f in dataclasses.fields(cls)]


# A body's base_revision: required, in the body or else the query string (revision_given()).
BASE_REVISION: Any = dataclasses.field(default=None, metadata={"or_query": True})


@overload
def revision_given(value: int | None) -> int: ...
@overload
def revision_given(value: int | None, required: Literal[True]) -> int: ...
@overload
def revision_given(value: int | None, required: bool) -> int | None: ...
def revision_given(value: int | None, required: bool = True) -> int | None:
    """A body's base_revision, else the query string's (a DELETE's body is dropped by some clients)."""
    if value is not None:
        return value
    return query_int("base_revision") if required else query_int("base_revision", None)
