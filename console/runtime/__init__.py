"""Python cells on Ray: the worker runtime, the pyjava API, the Ray cluster, MNIST data sets.

Exports resolve lazily, so importing `console.runtime` pulls in neither Ray nor TensorFlow.
"""
from __future__ import annotations

from typing import Any

from .job import PythonCellError, PythonJob

_LAZY = {
    "PythonRuntime": ("runtime", "PythonRuntime"),
    "RayCluster": ("cluster", "RayCluster"),
    "stop_embedded": ("cluster", "stop_embedded"),
    "write_mnist": ("datasets", "write_mnist"),
}

__all__ = ["PythonCellError", "PythonJob", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'console.runtime' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value
