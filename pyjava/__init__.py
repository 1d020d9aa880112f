"""pyjava compatibility: the names MLSQL cells import, implemented by console.worker and console.actors.

`from pyjava import RayContext` works as in old scripts; it is loaded on first use so that
`import pyjava.rayfix` and friends stay light.
"""
from typing import Any

__version__ = "0.3.3"


def __getattr__(name: str) -> Any:
    if name in ("RayContext", "PythonContext", "DataServer"):
        from pyjava.api import mlsql

        return getattr(mlsql, name)
    raise AttributeError(f"module 'pyjava' has no attribute {name!r}")
