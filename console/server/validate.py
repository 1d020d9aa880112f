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
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints, overload

from flask import current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from console.server.errors import ApiError
from console.server.limits import INT_MAX, INT_MIN
from console.store import Invalid
from console.store.views import check_view
from console.wire.codec import Max, Range

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


@dataclasses.dataclass(frozen=True)
class Check:
    """Annotated: `ok(value)` must be true, else a 400 "'<path>' <says>" (a cell id's form, text not blank)."""

    ok: Callable[[Any], bool]
    says: str


def body_as(cls: type[B], required: bool = True) -> B:
    """The request body as dataclass `cls` (a @typed_body): a field without a default is required; each
    is checked against its annotation (`str`, `int`, `bool`, `list[...]`, `dict[str, ...]`, `Literal[...]`,
    `X | None`, a nested dataclass, and `Annotated[X, Range(lo, hi) | Max(n) | Check(...)]` with
    console/wire/codec.py's Range and Max), each 400 naming the value's path ('tiles[2].width',
    'params.day'); a name a dataclass does not declare is a 400 that lists the ones it does."""
    value: B = _dataclass(cls, json_body(required), "")
    return value


def _dataclass(cls: type, data: dict[str, Any], where: str) -> Any:
    """`data` as `cls`; `where` is its path in the body ('' for the body itself, 'tiles[2]', 'anchor')."""
    fields = dataclasses.fields(cls)
    names = [json_name(f) for f in fields]
    unknown = sorted(str(k)[:40] for k in set(data) - set(names))
    if unknown:
        shown = ", ".join(f"{where}.{k}" if where else k for k in unknown)
        raise ApiError(400, f"unknown field{'s' if len(unknown) > 1 else ''} {shown}; "
                            f"{where or 'this body'} takes {', '.join(names)}")
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in fields:
        name = json_name(f)
        path = f"{where}.{name}" if where else name
        if f.metadata.get("null"):  # NULLABLE: the JSON value as it came (null too), checked by its endpoint
            values[f.name] = data.get(name, ABSENT)
        elif data.get(name) is None:
            if f.default is dataclasses.MISSING:
                raise ApiError(400, f"{path!r} is required")
            values[f.name] = f.default
        else:
            values[f.name] = _value(data[name], hints[f.name], path)
    return cls(**values)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls, include_extras=True)
    return hints


def _value(value: Any, tp: Any, path: str, checks: tuple[Any, ...] = ()) -> Any:
    """One JSON value (not null) checked against annotation `tp`; a 400 naming `path` when it is not one."""
    if get_origin(tp) is Annotated:
        return _value(value, tp.__origin__, path, checks + tp.__metadata__)
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:  # `X | None`: null was handled by the caller
        options = [a for a in get_args(tp) if a is not type(None)]
        assert len(options) == 1, f"{path}: no JSON type for {tp!r}"
        return _value(value, options[0], path, checks)
    if tp is Any:
        out = value
    elif origin is Literal:
        if not (isinstance(value, str) and value in get_args(tp)):
            raise ApiError(400, f"{path!r} must be one of {', '.join(map(str, get_args(tp)))}")
        out = value
    elif dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            shape = ", ".join(json_name(f) for f in dataclasses.fields(tp))
            raise ApiError(400, f"{path!r} must be an object {{{shape}}}")
        out = _dataclass(tp, value, path)
    elif origin is list or tp is list:
        out = _typed(path, value, list)
        item = (get_args(tp) or (Any,))[0]
        if item is not Any:
            out = [_value(v, item, f"{path}[{i}]") for i, v in enumerate(_capped(out, checks, path))]
    elif origin is dict or tp is dict:
        out = _typed(path, value, dict)
        key, item = get_args(tp) or (str, Any)
        assert key is str, f"{path}: a JSON object's keys are strings"
        if item is not Any:  # `dict[str, X]`: each value an X, named by its key ('params.day')
            out = {k: _value(v, item, f"{path}.{str(k)[:40]}") for k, v in _capped(out, checks, path).items()}
    else:
        assert tp in _TYPE_NAMES, f"{path}: no JSON type for {tp!r}"
        out = _typed(path, value, tp)
    for check in checks:
        if isinstance(check, Range) and not check.lo <= out <= check.hi:
            raise ApiError(400, f"{path!r} must be {check.lo} to {check.hi}")
        if isinstance(check, Max):
            _capped(out, (check,), path)
        if isinstance(check, Check) and not check.ok(out):
            raise ApiError(400, f"{path!r} {check.says}")
    return out


def _capped(value: Any, checks: tuple[Any, ...], path: str) -> Any:
    for check in checks:
        if isinstance(check, Max) and len(value) > check.n:
            unit = "characters" if isinstance(value, str) else "items"
            raise ApiError(400, f"{path!r} is at most {check.n} {unit} (it has {len(value)})")
    return value


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
    base revision that may come in the query string instead is written as required, and so is a field
    with `metadata["required"]`: one its endpoint requires though another endpoint's body, sharing the
    dataclass, may leave it out: a job's notebook_id, required to create, not to PATCH)."""
    return [json_name(f) + ("" if f.default is dataclasses.MISSING or f.metadata.get("or_query")
                            or f.metadata.get("required") else "?")
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
