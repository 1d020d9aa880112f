"""${name} substitution in statements, with errors that point at the ${…} in the cell.

A parameter's value (and a variable set from one) is data from outside the notebook: where it
lands, console/lang/paramsafe.py escapes it or refuses it (ParamRefused, at its ${…}).
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, TypeVar

from console.lang import ast, paramsafe
from console.lang.errors import ParseError, snippet_at

_VAR = re.compile(r"\$\{\s*([^}\n]*?)\s*\}")
S = TypeVar("S", bound=ast.Statement)


class ParamRefused(ParseError):
    """A parameter's value that cannot stand where its ${name} is (paramsafe.Refused, placed in the cell)."""


def names_in(text: str) -> list[str]:
    """The variables `text` substitutes (${name} each)."""
    return _VAR.findall(text) if "${" in text else []


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
               cell: str | int | None = None, cell_text: str = "", strict: bool = True,
               outside: Mapping[str, str | None] | None = None, where: str = paramsafe.VALUE,
               field: str = "") -> str:
    """Replace each ${name}; an unknown name is a ParseError naming it (or left as is when not strict).

    outside: the parameters (name -> declared default; None for a variable set from one), whose
    values `paramsafe.fill` escapes or refuses for `where` (SQL, shell text, …) they land in.
    """
    if "${" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in variables and outside is not None and name in outside:
            try:
                return paramsafe.fill(name, str(variables[name]), outside[name], where, text, m.start(), field)
            except paramsafe.Refused as exc:
                line, col = position_in(stmt, m.group(0)) if stmt is not None else (1, 1)
                raise ParamRefused(str(exc), cell, line, col, None,
                                   snippet_at(cell_text, line, col) if cell_text else "") from None
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


# Where each field of a statement lands, for a parameter's value (paramsafe's table).
_SET_WHERE = {"sql": paramsafe.SQL, "shell": paramsafe.PLAIN_TEXT}
_OPTION_WHERE = {"code": paramsafe.PLAIN_TEXT, "sql": paramsafe.FOREIGN_SQL, "query": paramsafe.FOREIGN_SQL}
# Everything else (paths, table names, other option values, set text) is one value already: as is.
_FIELD_NAMES = {"sql": "SQL", "value": "a shell command", "args": "a command's arguments", "code": "Python code"}


def substitute_statement(stmt: S, variables: Mapping[str, str], cell: str | int | None = None,
                         cell_text: str = "", outside: Mapping[str, str | None] | None = None) -> S:
    """The statement with ${…} replaced in its SQL, path, values and options.

    Python code (the `code` option of run … as Ray) is substituted leniently: an unknown ${x}
    stays as written, because `${…}` is also ordinary text in Python strings and shell templates.
    outside: the parameters, as `substitute` takes them.
    """
    changes: dict[str, Any] = {}  # field name -> new value, for dataclasses.replace

    def sub(text: str, strict: bool, where: str, field: str) -> str:
        return substitute(text, variables, stmt, cell, cell_text, strict=strict, outside=outside, where=where,
                          field=_FIELD_NAMES.get(field, field))

    # Table and function names too: `load csv.`x` as ${t}` and `!ray on "${t}"` are Byzer idioms.
    for name in ("sql", "path", "value", "table", "input", "output", "function", "alias"):
        value = getattr(stmt, name, None)
        if isinstance(value, str) and "${" in value:
            # A `set` text may be a macro body whose ${k} is its own named argument: left as written.
            lenient = name == "value" and isinstance(stmt, ast.Set) and stmt.type == "text"
            where = paramsafe.SQL if name == "sql" else paramsafe.VALUE
            if name == "value" and isinstance(stmt, ast.Set):
                where = _SET_WHERE.get(stmt.type, paramsafe.VALUE)
            changes[name] = sub(value, not lenient, where, name)
    args = getattr(stmt, "args", None)
    if isinstance(args, tuple) and any("${" in a for a in args):
        # Lenient, like Python code: a command's text (a shell line) may hold ${…} of its own.
        changes["args"] = tuple(sub(a, False, paramsafe.WORD, "args") for a in args)
    options = getattr(stmt, "options", None)
    if options and any("${" in v for v in options.values()):
        changes["options"] = {k: sub(v, k != "code", _OPTION_WHERE.get(k, paramsafe.VALUE), k)
                              for k, v in options.items()}
    return dataclasses.replace(stmt, **changes) if changes else stmt
