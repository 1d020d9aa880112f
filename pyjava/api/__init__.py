"""pyjava.api: see pyjava.api.mlsql; `Utils.show_plt(plt)` shows a matplotlib figure in the cell's output."""
from __future__ import annotations

from typing import Any


class Utils:
    """pyjava.api.Utils."""

    @staticmethod
    def show_plt(plt: Any, context: Any = None) -> None:
        from console.worker.display import show_plt

        show_plt(plt, context)


__all__ = ["Utils"]
