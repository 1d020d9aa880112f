"""Python completion with jedi (the library IPython uses): over live globals, or over the text alone.

Used by the cell worker (jedi.Interpreter over the session's globals, so `x.` offers what `x`
really holds) and by the kernel when no worker is up (jedi.Script on the cell's text).
"""
from __future__ import annotations

from typing import Any

MAX_ITEMS = 400
_TYPES = {"module": "namespace", "class": "class", "instance": "variable", "function": "function",
          "param": "variable", "path": "text", "keyword": "keyword", "property": "property",
          "statement": "variable"}


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
