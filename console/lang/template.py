"""${name} substitution in statements, with errors that point at the ${…} in the cell."""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, TypeVar

from console.lang import ast
from console.lang.errors import ParseError, snippet_at

_VAR = re.compile(r"\$\{\s*([^}\n]*?)\s*\}")
S = TypeVar("S", bound=ast.Statement)


def position_in(stmt: ast.Statement, needle: str) -> tuple[int, int]:
    """Cell line/column of the first `needle` in the statement's text (its start if absent)."""
    idx = stmt.source.find(needle)
    if idx < 0:
        return stmt.line, stmt.column
    prefix = stmt.source[:idx]
    newlines = prefix.count("\n")
    if newlines == 0:
        return stmt.line, stmt.column + idx
    return stmt.line + newlines, idx - prefix.rfind("\n")


def substitute(text: str, variables: Mapping[str, str], stmt: ast.Statement | None = None,
               cell: str | int | None = None, cell_text: str = "", strict: bool = True) -> str:
    """Replace each ${name}; an unknown name is a ParseError naming it (or left as is when not strict)."""
    if "${" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in variables:
            return str(variables[name])
        if not strict:
            return m.group(0)
        line, col = position_in(stmt, m.group(0)) if stmt is not None else (1, 1)
        # A ChainMap's first map holds what the user set; the rest are built-ins not worth listing.
        user = getattr(variables, "maps", [variables])[0]
        known = ", ".join(sorted(k for k in user if not k.startswith("__"))) or "none"
        raise ParseError(f"unknown variable ${{{name}}} (variables set: {known})", cell, line, col,
                         "a variable set earlier with `set name = …`",
                         snippet_at(cell_text, line, col) if cell_text else "")

    return _VAR.sub(repl, text)


def substitute_statement(stmt: S, variables: Mapping[str, str], cell: str | int | None = None,
                         cell_text: str = "") -> S:
    """The statement with ${…} replaced in its SQL, path, values and options.

    Python code (the `code` option of run … as Ray) is substituted leniently: an unknown ${x}
    stays as written, because `${…}` is also ordinary text in Python strings and shell templates.
    """
    changes: dict[str, Any] = {}  # field name -> new value, for dataclasses.replace
    # Table and function names too: `load csv.`x` as ${t}` and `!ray on "${t}"` are Byzer idioms.
    for name in ("sql", "path", "value", "table", "input", "output", "function", "alias"):
        value = getattr(stmt, name, None)
        if isinstance(value, str) and "${" in value:
            # A `set` text may be a macro body whose ${k} is its own named argument: left as written.
            lenient = name == "value" and isinstance(stmt, ast.Set) and stmt.type == "text"
            changes[name] = substitute(value, variables, stmt, cell, cell_text, strict=not lenient)
    args = getattr(stmt, "args", None)
    if isinstance(args, tuple) and any("${" in a for a in args):
        # Lenient, like Python code: a command's text (a shell line) may hold ${…} of its own.
        changes["args"] = tuple(substitute(a, variables, stmt, cell, cell_text, strict=False) for a in args)
    options = getattr(stmt, "options", None)
    if options and any("${" in v for v in options.values()):
        changes["options"] = {k: substitute(v, variables, stmt, cell, cell_text, strict=(k != "code"))
                              for k, v in options.items()}
    return dataclasses.replace(stmt, **changes) if changes else stmt
