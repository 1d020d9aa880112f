"""`from pyjava import rayfix` as old pyjava notebooks write it.

pyjava's rayfix smoothed over Ray API changes between Ray 0.8 and 1.x (how to connect, the
namespace argument) and patched connecting for its RayContext. Here RayContext.connect already
talks to the installed Ray (console/worker/context.py), so there is nothing left to patch: the
module exists so that the import works, and `RayWrapper` does what it did, by the same means.
"""
from __future__ import annotations

from typing import Any


class RayWrapper:
    """pyjava's thin wrapper over the `ray` module: attribute access goes to ray itself."""

    def __getattr__(self, name: str) -> Any:
        import ray

        return getattr(ray, name)


__all__ = ["RayWrapper"]
