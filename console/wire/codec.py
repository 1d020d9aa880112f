"""Typed messages and the one decoder that checks them against their dataclass annotations.

A message is a frozen dataclass with a `type` tag. `decode` builds one from a JSON object and
checks every field's type (nested dataclasses, lists, dicts, Literal and optional fields
included) and size before any handler sees it: an unknown type, an unknown or missing field, a
wrong type, a float that is not finite or a string past its cap is a DecodeError naming what
was wrong. Each hop has its own `Vocabulary` (console/wire/{kernel,worker,browser}.py), so a
message of one pipe is refused on another.

Sizes: a string holds at most MAX_TEXT characters and a list or map MAX_ITEMS items unless the
field says otherwise, as `field(metadata=cap(n))` or `Annotated[str, Max(n)]`; integers are
64-bit unless `Annotated[int, Range(lo, hi)]`; floats are finite; `Any` nests MAX_DEPTH deep.

Written here rather than taken from msgspec: msgspec's tagged unions need its own Struct
classes (the messages are plain dataclasses, shared with the output model and the store), it
ignores unknown dataclass fields, and the checks wanted (finite floats, string caps, ids of a
fixed alphabet) would be spelled as annotations anyway.
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union

MAX_TEXT = 1 << 20  # a string field's default cap, in characters
MAX_ITEMS = 10_000  # a list's or dict's default cap
INT64 = (-(2**63), 2**63 - 1)
MAX_DEPTH = 32  # nesting of an Any value
ID_MAX = 64
_ID = re.compile(r"^[A-Za-z0-9_-]*$")  # what the store makes (letters, digits, _ and -): never "/" or ".."
_ID_TYPES = {"NotebookId", "CellId", "RunId", "SessionId", "FaultId"}

_ALL: dict[str, type["Message"]] = {}


M = TypeVar("M", bound="Message")


class DecodeError(ValueError):
    """A message that does not match its vocabulary; the text says which field and why.
    `status`: 400 (wrong shape) or 413 (too big)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Max:
    """Annotated: at most `n` characters (a string) or items (a list or map)."""

    n: int


@dataclass(frozen=True)
class Range:
    """Annotated: an integer within lo..hi (inclusive)."""

    lo: int
    hi: int


def cap(n: int) -> dict[str, int]:
    """Field metadata: at most n characters (a string) or n items (a list or dict)."""
    return {"max": n}


@dataclasses.dataclass(frozen=True)
class Message:
    type: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.type:
            other = _ALL.get(cls.type)
            if other is not None and other.__qualname__ != cls.__qualname__:
                raise TypeError(f"message type {cls.type!r} is taken by {other.__module__}.{other.__qualname__}")
            _ALL[cls.type] = cls

    def to_wire(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["type"] = self.type
        return data


def message_types() -> dict[str, type[Message]]:
    """Every message of every hop, by type (docs/protocol.md lists them all)."""
    return dict(_ALL)


all_types = message_types


class Vocabulary:
    """The messages one end of one pipe accepts."""

    def __init__(self, name: str, *classes: type[Message]) -> None:
        self.name = name
        self.types: dict[str, type[Message]] = {cls.type: cls for cls in classes}

    def register(self, cls: type[M]) -> type[M]:
        """A class decorator: `cls` is one of this vocabulary's messages."""
        self.types[cls.type] = cls
        return cls

    def __contains__(self, cls: object) -> bool:
        return isinstance(cls, type) and self.types.get(getattr(cls, "type", "")) is cls

    def decode(self, data: Any) -> Message:
        if not isinstance(data, dict):
            raise DecodeError(f"{self.name}: a message must be a JSON object, not {_kind(data)}")
        kind = data.get("type")
        cls = self.types.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise DecodeError(f"unknown message type {str(kind)[:40]!r} on the {self.name} channel")
        return decode(cls, data)

    def decode_line(self, line: bytes | str) -> Message:
        return self.decode(loads(line, self.name))


def loads(line: bytes | str, where: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise DecodeError(f"{where}: not a JSON line ({str(exc)[:80]})") from None


def encode(msg: Message) -> bytes:
    """One JSON line (without its newline); non-ASCII text stays UTF-8, not 6-byte escapes."""
    return json.dumps(msg.to_wire(), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


# ---------------------------------------------------------------- the checks


def decode(cls: type[M], data: Any) -> M:
    """`cls` built from `data` (its `type` key ignored), every field checked against its annotation."""
    return typing.cast(M, _dataclass(cls, data, cls.type, skip=("type",)))


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls, include_extras=True)
    return hints


def _dataclass(cls: type, data: Any, where: str, skip: tuple[str, ...] = ()) -> Any:
    if not isinstance(data, dict):
        raise DecodeError(f"{where}: must be an object, not {_kind(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    extra = [k for k in data if k not in fields and k not in skip]
    if extra:
        raise DecodeError(f"{where}: unknown fields {sorted(str(k)[:40] for k in extra)[:5]}")
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise DecodeError(f"{where}: {name} is missing")
            continue
        values[name] = _check(data[name], hints[name], f"{where}.{name}", f.metadata.get("max"))
    return cls(**values)


def _check(value: Any, tp: Any, where: str, limit: int | None = None, depth: int = 0) -> Any:
    bounds = INT64
    if typing.get_origin(tp) is Annotated:
        for extra in tp.__metadata__:
            if isinstance(extra, Max):
                limit = extra.n
            elif isinstance(extra, Range):
                bounds = (extra.lo, extra.hi)
        tp = tp.__origin__
    if tp is Any:
        _plain(value, where, depth)
        return value
    supertype = getattr(tp, "__supertype__", None)
    if supertype is not None:  # a NewType id
        value = _check(value, supertype, where, limit or (ID_MAX if tp.__name__ in _ID_TYPES else None))
        if tp.__name__ in _ID_TYPES and not _ID.match(value):
            raise DecodeError(f"{where}: {value[:40]!r} is not an id")
        return value
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        options = [o for o in typing.get_args(tp) if o is not type(None)]
        if value is None and len(options) < len(typing.get_args(tp)):
            return None
        if len(options) == 1:  # an optional field: the one type's own reason
            return _check(value, options[0], where, limit, depth)
        for option in typing.get_args(tp):
            try:
                return _check(value, option, where, limit, depth)
            except DecodeError:
                continue
        raise DecodeError(f"{where}: {_kind(value)} is none of {_name(tp)}")
    if origin is Literal:
        if isinstance(value, (str, int)) and not isinstance(value, bool) and value in typing.get_args(tp):
            return value
        raise DecodeError(f"{where}: must be one of {', '.join(map(repr, typing.get_args(tp)))}")
    if tp is type(None) or tp is None:
        if value is None:
            return None
        raise DecodeError(f"{where}: must be null, not {_kind(value)}")
    if tp is str:
        if not isinstance(value, str):
            raise DecodeError(f"{where}: must be a string, not {_kind(value)}")
        if len(value) > (limit or MAX_TEXT):
            raise DecodeError(f"{where}: longer than {limit or MAX_TEXT} characters", 413)
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise DecodeError(f"{where}: must be true or false, not {_kind(value)}")
        return value
    if tp is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DecodeError(f"{where}: must be an integer, not {_kind(value)}")
        if not bounds[0] <= value <= bounds[1]:
            raise DecodeError(f"{where}: must be an integer within {bounds[0]}..{bounds[1]}")
        return value
    if tp is float:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise DecodeError(f"{where}: must be a number, not {_kind(value)}")
        if not math.isfinite(value):
            raise DecodeError(f"{where}: must be a finite number")
        return float(value)
    if origin in (list, tuple):
        args = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise DecodeError(f"{where}: must be a list, not {_kind(value)}")
        if len(value) > (limit or MAX_ITEMS):
            raise DecodeError(f"{where}: more than {limit or MAX_ITEMS} items", 413)
        item = args[0] if args else Any
        items = [_check(v, item, f"{where}[{i}]", None, depth + 1) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        key_tp, item = typing.get_args(tp) or (str, Any)
        if not isinstance(value, dict):
            raise DecodeError(f"{where}: must be an object, not {_kind(value)}")
        if len(value) > (limit or MAX_ITEMS):
            raise DecodeError(f"{where}: more than {limit or MAX_ITEMS} keys", 413)
        return {_check(k, key_tp, f"{where} key", 1024): _check(v, item, f"{where}[{str(k)[:40]!r}]", None, depth + 1)
                for k, v in value.items()}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass(tp, value, where)
    raise TypeError(f"{where}: the decoder has no rule for {tp!r}")  # a message declared with a type we do not check


def _plain(value: Any, where: str, depth: int) -> None:
    """A JSON value of bounded depth whose floats are finite."""
    if depth > MAX_DEPTH:
        raise DecodeError(f"{where}: nested deeper than {MAX_DEPTH}")
    if isinstance(value, float) and not math.isfinite(value):
        raise DecodeError(f"{where}: must be a finite number")
    if isinstance(value, str) and len(value) > MAX_TEXT:
        raise DecodeError(f"{where}: longer than {MAX_TEXT} characters", 413)
    if isinstance(value, (list, dict)) and len(value) > MAX_ITEMS:
        raise DecodeError(f"{where}: more than {MAX_ITEMS} items", 413)
    if isinstance(value, list):
        for v in value:
            _plain(v, where, depth + 1)
    elif isinstance(value, dict):
        for v in value.values():
            _plain(v, where, depth + 1)


def fit(value: Any, depth: int = 0) -> Any:
    """`value` cut to what an `Any` field accepts, so a sender's own data never breaks the protocol:
    strings past MAX_TEXT and lists or maps past MAX_ITEMS cut (a string ends in "…"), a float
    that is not finite becomes null, anything nested past MAX_DEPTH its text."""
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT - 1] + "…"
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int)):
        return value
    if depth >= MAX_DEPTH:
        return fit(str(value), depth)
    if isinstance(value, (list, tuple)):
        return [fit(v, depth + 1) for v in value[:MAX_ITEMS]]
    if isinstance(value, dict):
        return {str(k)[:1024]: fit(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]}
    return fit(str(value), depth)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")
