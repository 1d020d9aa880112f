"""Typed messages and the one decoder every channel uses: each field's type and size is checked.

A message is a frozen dataclass with a `type` tag; `to_wire()` gives the JSON dict that travels.
A channel's `Vocabulary` names the types it accepts; `Vocabulary.decode(data)` refuses an unknown
type, an unknown or missing field, and a field of the wrong type or past its size with a
`DecodeError` naming the field, so handlers get messages whose fields are what they say.

Sizes: a string field holds at most `MAX_TEXT` characters and a list or map `MAX_ITEMS` items
unless its annotation says otherwise (`Annotated[str, Max(64)]`); integers are 64-bit unless
`Annotated[int, Range(lo, hi)]`; floats are finite. Nesting inside `Any` is at most `MAX_DEPTH`.
"""
from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union

MAX_TEXT = 1 << 20       # characters of a string field without its own Max
MAX_ITEMS = 10_000       # items of a list or map field without its own Max
MAX_DEPTH = 32           # nesting of a value typed Any
INT64 = (-(2**63), 2**63 - 1)

M = TypeVar("M", bound="Message")
_ALL: dict[str, type["Message"]] = {}  # every type of every channel: console/messages.py's from_wire


class DecodeError(ValueError):
    """A message that is not what its type says; `status` is 400 (wrong shape) or 413 (too big)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Max:
    """At most `n` characters (a string) or items (a list or map)."""

    n: int


@dataclass(frozen=True)
class Range:
    """An integer within lo..hi (inclusive)."""

    lo: int
    hi: int


@dataclass(frozen=True)
class Message:
    type: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.type:
            _ALL[cls.type] = cls

    def to_wire(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["type"] = self.type
        return data


def all_types() -> dict[str, type[Message]]:
    return dict(_ALL)


class Vocabulary:
    """The message types of one channel; `register` is a class decorator."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.types: dict[str, type[Message]] = {}

    def register(self, cls: type[M]) -> type[M]:
        self.types[cls.type] = cls
        return cls

    def decode(self, data: Any) -> Message:
        if not isinstance(data, dict):
            raise DecodeError(f"a {self.name} message is a JSON object with a 'type'")
        kind = data.get("type")
        cls = self.types.get(kind) if isinstance(kind, str) else None
        if cls is None:
            shown = repr(kind)[:80] if isinstance(kind, (str, int, float, bool)) or kind is None else type(kind).__name__
            raise DecodeError(f"unknown {self.name} message type {shown}")
        return decode(cls, data)


def decode(cls: type[M], data: dict[str, Any]) -> M:
    """`cls` built from `data` (its `type` key ignored), every field checked against its annotation."""
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]  # cls is a dataclass
    extra = set(data) - names - {"type"}
    if extra:
        shown = sorted(str(k)[:40] for k in extra)[:5]
        raise DecodeError(f"{cls.type}: unknown fields {shown}")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise DecodeError(f"{cls.type}: {f.name!r} is required")
            continue
        values[f.name] = _check(data[f.name], hints[f.name], f"{cls.type}: {f.name!r}", 0)
    return cls(**values)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, include_extras=True)
    return _HINTS[cls]


def _check(value: Any, hint: Any, where: str, depth: int) -> Any:
    limit: Max | None = None
    bounds = INT64
    if typing.get_origin(hint) is Annotated:
        for extra in hint.__metadata__:
            if isinstance(extra, Max):
                limit = extra
            elif isinstance(extra, Range):
                bounds = (extra.lo, extra.hi)
        hint = hint.__origin__
    while hasattr(hint, "__supertype__"):  # NewType ids: their plain type
        hint = hint.__supertype__
    origin = typing.get_origin(hint)
    if hint is Any:
        return _check_any(value, where, depth)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        rest = [o for o in options if o is not type(None)]
        if len(rest) == 1:
            return _check(value, rest[0], where, depth)
        raise DecodeError(f"{where}: unsupported union")  # not used by any message
    if origin is Literal:
        allowed = typing.get_args(hint)
        if not isinstance(value, str) or value not in allowed:
            raise DecodeError(f"{where} must be one of {', '.join(map(str, allowed))}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise DecodeError(f"{where} must be a string")
        n = limit.n if limit else MAX_TEXT
        if len(value) > n:
            raise DecodeError(f"{where} is longer than {n} characters", 413)
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise DecodeError(f"{where} must be true or false")
        return value
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DecodeError(f"{where} must be an integer")
        if not bounds[0] <= value <= bounds[1]:
            raise DecodeError(f"{where} must be an integer within {bounds[0]}..{bounds[1]}")
        return value
    if hint is float:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise DecodeError(f"{where} must be a finite number")
        return float(value)
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise DecodeError(f"{where} must be a list")
        n = limit.n if limit else MAX_ITEMS
        if len(value) > n:
            raise DecodeError(f"{where} has more than {n} items", 413)
        (item,) = typing.get_args(hint)[:1] or (Any,)
        checked = [_check(v, item, where, depth + 1) for v in value]
        return tuple(checked) if origin is tuple else checked
    if origin is dict:
        if not isinstance(value, dict):
            raise DecodeError(f"{where} must be an object")
        n = limit.n if limit else MAX_ITEMS
        if len(value) > n:
            raise DecodeError(f"{where} has more than {n} entries", 413)
        key_hint, item_hint = typing.get_args(hint)
        return {_check(k, key_hint, f"{where} (a key)", depth + 1): _check(v, item_hint, where, depth + 1)
                for k, v in value.items()}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if not isinstance(value, dict):
            raise DecodeError(f"{where} must be an object")
        return decode(hint, value)  # type: ignore[type-var]  # a nested record, not a Message
    raise DecodeError(f"{where}: no decoder for {hint!r}")  # a message declared with a type we do not check


def _check_any(value: Any, where: str, depth: int) -> Any:
    """A JSON value of any shape, within the depth, size and number limits."""
    if depth > MAX_DEPTH:
        raise DecodeError(f"{where} is nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _check(value, str, where, depth)
    if isinstance(value, (int, float)):
        return _check(value, int if isinstance(value, int) else float, where, depth)
    if isinstance(value, list):
        return _check(value, list[Any], where, depth)
    if isinstance(value, dict):
        return _check(value, dict[str, Any], where, depth)
    raise DecodeError(f"{where} holds a {type(value).__name__}, which JSON does not have")
