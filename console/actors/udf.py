"""The actor behind a model function (`register Ray.`model` as f`): pyjava's UDFWorker.

Each actor restores the model once, with the registerCode's init function, and then answers
batches of rows: one `predict_func(model, v)` call per SQL row, as Byzer calls it (v is the
row's argument, e.g. `array(image)`: a list of vectors). The actors are created and owned by the
kernel's model-function worker (console/worker/udf.py), so they end when it does.
"""
from __future__ import annotations

import os
from typing import Any, Callable


def result_value(result: Any) -> Any:
    """The `value` of what predict_func returned (Byzer's one output row), or a TypeError saying what came."""
    if isinstance(result, dict) and "value" in result:
        return result["value"]
    shown = repr(result)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise TypeError(f'predict_func must return a dict {{"value": [[number, ...]]}}; it returned {shown}')


class UDFWorker:
    """One Ray actor of a model function."""

    def __init__(self, model_refs: list[Any], conf: dict[str, str],
                 init_func: Callable[[list[Any], dict[str, str]], Any],
                 apply_func: Callable[[Any, Any], Any]) -> None:
        self.model = init_func(model_refs, conf)
        self.apply_func = apply_func
        self.rows = 0

    def ready(self) -> int:
        """Returns once the model is restored (an init error surfaces here): this actor's pid."""
        return os.getpid()

    def apply(self, v: Any) -> Any:
        """Byzer's UDFWorker.apply: predict_func on one argument, its whole result."""
        self.rows += 1
        return self.apply_func(self.model, v)

    def apply_batch(self, values: list[Any]) -> list[Any]:
        """predict_func on each argument in turn; the `value` of each result (None stays None)."""
        out = []
        for v in values:
            out.append(None if v is None else result_value(self.apply_func(self.model, v)))
        self.rows += len(values)
        return out
