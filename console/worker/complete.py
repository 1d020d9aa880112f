"""Python completion with jedi (the library IPython uses): over live globals, or over the text alone.

Used by the cell worker (jedi.Interpreter over the session's globals, so `x.` offers what `x`
really holds) and by the kernel when no worker is up (jedi.Script on the cell's text).
"""
from __future__ import annotations

import signal
import threading
from typing import Any

MAX_ITEMS = 400
# The worker's own limit, under the kernel's wait for the answer (python_runtime.complete, 2 s):
# jedi reads live objects (it calls properties), which may take any time. A completion left
# running after the kernel gave up held the worker: the next cell waited behind it, and an
# interrupt pressed then was ignored (SIGINT is ignored between cells) until the kernel killed
# the worker, and every global with it.
WORKER_SECONDS = 1.5
_TYPES = {"module": "namespace", "class": "class", "instance": "variable", "function": "function",
          "param": "variable", "path": "text", "keyword": "keyword", "property": "property",
          "statement": "variable"}


class _Stopped(BaseException):
    """Raised into jedi by the time limit or an interrupt (not an Exception: jedi catches those)."""


def python_items(source: str, line: int, column: int, namespace: dict[str, Any] | None) -> list[dict[str, str]]:
    """jedi's completions at line (1-based) / column (0-based); Interpreter when a namespace is given."""
    import jedi  # type: ignore[import-untyped]

    try:
        if namespace is not None:
            found = jedi.Interpreter(source, [namespace]).complete(line, column)
        else:
            found = jedi.Script(source).complete(line, column)
    except Exception:  # jedi raises on odd positions in broken code: no completion, not an error
        return []
    return [{"label": c.name, "type": _TYPES.get(c.type, "variable"), "detail": c.type}
            for c in found[:MAX_ITEMS] if not c.name.startswith("__")]


def bounded_items(source: str, line: int, column: int, namespace: dict[str, Any],
                  seconds: float = WORKER_SECONDS) -> tuple[list[dict[str, str]], bool]:
    """python_items, stopped after `seconds` or by SIGINT: (items, whether SIGINT came).

    On the main thread only (signals); elsewhere it is python_items as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        return python_items(source, line, column, namespace), False
    armed = True
    interrupted = False

    def on_alarm(signum: int, frame: Any) -> None:
        if armed:
            raise _Stopped

    def on_interrupt(signum: int, frame: Any) -> None:
        nonlocal interrupted
        interrupted = True  # the kernel interrupts only a job it sent: the one after this
        if armed:
            raise _Stopped

    old_alarm = signal.signal(signal.SIGALRM, on_alarm)
    old_int = signal.signal(signal.SIGINT, on_interrupt)
    items: list[dict[str, str]] = []
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            items = python_items(source, line, column, namespace)
        finally:
            armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Stopped:
        items = []
    finally:
        signal.signal(signal.SIGALRM, old_alarm)
        signal.signal(signal.SIGINT, old_int)
    return items, interrupted
