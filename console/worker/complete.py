"""Python completion with jedi (the library IPython uses): over live globals, or over the text alone.

Used by the cell worker (jedi.Interpreter over the session's globals, so `x.` offers what `x`
really holds) and by the kernel when no worker is up (jedi.Script on the cell's text).
"""
from __future__ import annotations

import os
import pickle
import re
import signal
import threading
import types
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


# After the limit, the stop is raised again at this interval until it lands: one raised inside a
# weakref callback is swallowed by Python, and one due while parso writes its cache file or a
# `__del__` runs waits for it to end (below).
_AGAIN = 0.05
_PARSO_CACHE = os.path.join("parso", "cache.py")


def _not_now(frame: Any) -> bool:
    """Whether a stop raised here would do harm: parso's cache module on the stack (a stop cuts its
    pickle short, and the empty file then fails every later completion in every process that
    shares the folder: seen, builtins.pyi's cache emptied by the first stopped completion), or a
    `__del__` (Python swallows the stop, prints "Exception ignored in" on the worker's stderr and
    the object's clean-up is left half done: seen, jedi's InferenceStateSubprocess.__del__)."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or code.co_filename.endswith(_PARSO_CACHE):
            return True
        frame = frame.f_back
    return False


def _drop_parse_cache(folder: Any) -> None:
    import parso.cache

    try:
        parso.cache.clear_cache(folder)
    except OSError:
        parso.cache.parser_cache.clear()


def python_items(source: str, line: int, column: int, namespace: dict[str, Any] | None) -> list[dict[str, str]]:
    """jedi's completions at line (1-based) / column (0-based); Interpreter when a namespace is given."""
    import jedi  # type: ignore[import-untyped]

    for attempt in range(2):
        try:
            if namespace is not None:
                found = jedi.Interpreter(source, [namespace]).complete(line, column)
            else:
                found = jedi.Script(source).complete(line, column)
            break
        except (EOFError, pickle.UnpicklingError):
            # A parse cache file cut short (a process killed while parso wrote it, or one read
            # while another writes: the kernel and its worker share the folder) fails every
            # completion that needs it, for good. It is only a cache: start it again, once.
            if attempt:
                return []
            _drop_parse_cache(jedi.settings.cache_directory)
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
        if armed and not _not_now(frame):
            raise _Stopped

    def on_interrupt(signum: int, frame: Any) -> None:
        nonlocal interrupted
        interrupted = True  # the kernel interrupts only a job it sent: the one after this
        if armed:
            signal.setitimer(signal.ITIMER_REAL, _AGAIN, _AGAIN)  # the stop, again, until it lands
            if not _not_now(frame):
                raise _Stopped

    old_alarm = signal.signal(signal.SIGALRM, on_alarm)
    old_int = signal.signal(signal.SIGINT, on_interrupt)
    items: list[dict[str, str]] = []
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds, _AGAIN)
            items = python_items(source, line, column, namespace)
        finally:
            armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Stopped:
        # Out of time (a cold jedi's first answer takes over a second on a busy machine): the
        # names that are plainly there rather than nothing, as a first Tab expects. Interrupted:
        # nothing, at once.
        items = [] if interrupted else namespace_items(source, line, column, namespace)
    finally:
        signal.signal(signal.SIGALRM, old_alarm)
        signal.signal(signal.SIGINT, old_int)
    return items, interrupted


_TAIL = re.compile(r"(?:([A-Za-z_][A-Za-z0-9_]*)\.)?([A-Za-z_][A-Za-z0-9_]*)?$")


def namespace_items(source: str, line: int, column: int, namespace: dict[str, Any]) -> list[dict[str, str]]:
    """Completions read from the namespace without running any of its code: `pre` offers the
    globals that start with it, `name.pre` the attributes of global `name` found in its own
    `__dict__` and its classes' (no property, `__getattr__` or `__dir__` is called, unlike dir())."""
    lines = source.splitlines() or [""]
    text = lines[line - 1][:column] if 0 < line <= len(lines) else ""
    match = _TAIL.search(text)
    if match is None:
        return []
    owner, prefix = match.group(1), match.group(2) or ""
    if owner is None:
        if not prefix:
            return []
        names = {k: namespace[k] for k in namespace if isinstance(k, str)}
    else:
        if owner not in namespace:
            return []
        names = _attributes(namespace[owner])
    found = [(n, v) for n, v in sorted(names.items()) if n.startswith(prefix) and not n.startswith("__")]
    return [{"label": n, "type": _kind(v), "detail": _kind(v)} for n, v in found[:MAX_ITEMS]]


def _attributes(obj: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    cls = type(obj)
    for klass in reversed(type.__dict__["__mro__"].__get__(cls)):  # the real MRO, never a metaclass's property
        found.update({k: v for k, v in type.__dict__["__dict__"].__get__(klass).items() if isinstance(k, str)})
    try:
        own = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        own = None
    if isinstance(own, dict):
        found.update({k: v for k, v in own.items() if isinstance(k, str)})
    return found


def _kind(value: Any) -> str:
    if isinstance(value, property):
        return "property"
    if isinstance(value, type):
        return "class"
    if isinstance(value, types.ModuleType):
        return "namespace"
    return "function" if callable(value) else "variable"
