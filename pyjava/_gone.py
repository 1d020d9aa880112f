"""pyjava names that have no equivalent here: importing them works, using them says what to do.

Old MLSQL scripts import these at the top even when the cell never uses them, so a missing
module would fail the whole cell on its first line. Each one is a class whose construction (or
actor-style `.remote()`/`.options()`) raises NotImplementedError naming what it was in MLSQL and
what to use in this runtime instead.
"""
from __future__ import annotations

from typing import Any, NoReturn


def gone(module: str, name: str, was: str, instead: str) -> type:
    """A class `module.name` that raises, on any use, "<name> was <was> ... use <instead>"."""
    message = (f"{module}.{name} was {was} in MLSQL; it has no equivalent in MLSQL Console for "
               f"Python. Use {instead} instead.")

    def refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
        raise NotImplementedError(message)

    return type(name, (), {
        "__module__": module,
        "__doc__": message,
        "__init__": refuse,
        # Ray actor classes were used as `X.remote(...)` or `X.options(...).remote(...)`.
        "remote": staticmethod(refuse),
        "options": staticmethod(refuse),
    })
