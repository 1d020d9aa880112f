"""The variable explorer's view of the session's Python globals: name, type, size, a short value.

Metadata only: nothing here may make a lazy object compute (a Daft or Spark-like DataFrame, a Ray
ObjectRef, a generator), so a value is shown only for the types whose repr is known to be cheap
(numbers, text, small containers through reprlib, numpy arrays, which summarise themselves);
every other object is its type's name. Sizes come from `.shape` when it is a tuple of ints and
from len() of the builtin containers, never from a user-defined __len__.
"""
from __future__ import annotations

import reprlib
import types
from typing import Any

MAX_ITEMS = 500
VALUE_CHARS = 120
_HIDDEN = frozenset({"context", "data_manager", "ray_context"})  # the product's own handles
_CHEAP = (bool, int, float, complex, str, bytes, type(None), list, tuple, dict, set, frozenset)
_SKIP = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, types.MethodType)

_repr = reprlib.Repr()
_repr.maxstring = VALUE_CHARS
_repr.maxother = VALUE_CHARS
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 8


def variables(ns: dict[str, Any]) -> list[dict[str, str]]:
    """The user's variables of `ns`, by name, without modules, functions, classes and _private names."""
    out = []
    for name in sorted(ns):
        if name.startswith("_") or name in _HIDDEN:
            continue
        value = ns[name]
        if isinstance(value, _SKIP):
            continue
        out.append({"name": name, "type": _type_name(value), "size": _size(value), "value": _value(value)})
        if len(out) >= MAX_ITEMS:
            break
    return out


def _type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def _size(value: Any) -> str:
    shape = getattr(type(value), "shape", None)  # looked up on the class: a property of numpy/pandas/arrow
    if shape is not None:
        try:
            got = value.shape
        except Exception:
            got = None
        if isinstance(got, tuple) and all(isinstance(n, int) for n in got):
            return "×".join(str(n) for n in got) or "scalar"
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)):
        return f"{len(value)}"
    return ""


def _value(value: Any) -> str:
    if isinstance(value, _CHEAP):
        return _repr.repr(value)
    if type(value).__module__ == "numpy":  # ndarray and numpy scalars summarise themselves
        try:
            import numpy as np

            text = np.array2string(value, threshold=8, edgeitems=2) if isinstance(value, np.ndarray) else repr(value)
        except Exception:
            return ""
        return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 1] + "…"
    return ""
