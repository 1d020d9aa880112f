"""A notebook's parameters: its `set name = "default" where type="defaultParam";` statements.

Byzer's way: the default holds unless the run brings a value. `declared` lists them (name, default,
the cell they are in) with the real parser; `apply` writes a run's overrides into a cell's source
as a plain `set` right before the declaration, on the same line, so the `${name}` substitution
of every later statement sees the override, the declaration still marks the name as a parameter
(Python cells' `context.params`), no line number of the cell moves, and the stored run's source
says exactly what ran.

Runs in: the server (listing, checking, rewriting) and the CLI's headless runner.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from console.lang import paramsafe
from console.lang.annotations import header_kind
from console.lang.ast import Set
from console.lang.errors import ParseError
from console.lang.parser import parse
from console.lang.template import ParamRefused, names_in, substitute_statement

DEFAULT_PARAM = "defaultParam"


@dataclass(frozen=True)
class Param:
    name: str
    default: str
    cell: int  # 0-based position among the notebook's cells


class UnknownParams(ValueError):
    """Overrides for names the notebook does not declare; the message lists those it does."""

    def __init__(self, unknown: list[str], declared: list[str]) -> None:
        self.unknown, self.declared = unknown, declared
        have = ", ".join(declared) if declared else "none (add set name = \"default\" where type=\"defaultParam\";)"
        super().__init__(f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}: "
                         f"this notebook declares {have}")


def _is_mlsql(kind: str, source: str) -> bool:
    declared = header_kind(source)
    return (declared or kind or "mlsql").lower() in ("mlsql", "sql", "byzer")


def _declarations(source: str) -> list[Set]:
    try:
        stmts = parse(source)
    except ParseError:  # a cell that does not parse declares nothing; running it reports why
        return []
    return [s for s in stmts if isinstance(s, Set) and s.type == DEFAULT_PARAM]


def declared(cells: Iterable[tuple[str, str]]) -> list[Param]:
    """The parameters of (kind, source) cells in order; a name declared twice keeps its first default."""
    seen: dict[str, Param] = {}
    for i, (kind, source) in enumerate(cells):
        if not _is_mlsql(kind, source) or DEFAULT_PARAM.lower() not in source.lower():
            continue
        for stmt in _declarations(source):
            seen.setdefault(stmt.key, Param(stmt.key, stmt.value, i))
    return list(seen.values())


class UnsafeParam(ValueError):
    """A value that cannot stand where the notebook's cells put its ${name} (console/lang/paramsafe.py)."""


def check(params: list[Param], overrides: Mapping[str, str],
          cells: Iterable[tuple[str, str]] | None = None) -> dict[str, str]:
    """The overrides as strings; UnknownParams when one names no declared parameter, UnsafeParam
    when one cannot stand where `cells` (kind, source) substitute it."""
    names = [p.name for p in params]
    unknown = sorted(k for k in overrides if k not in names)
    if unknown:
        raise UnknownParams(unknown, names)
    values = {k: str(v) for k, v in overrides.items()}
    for k, v in values.items():
        if "${" in v:  # the override is a `set` whose text is substituted: it would read other variables
            raise UnsafeParam(f"parameter {k}: a value may not hold ${{…}} (it would be substituted, not kept)")
    if cells is not None and values:
        refuse_unsafe(list(cells), params, values)
    return values


class _Any(dict[str, str]):
    """Variables for the check: every name is known ('' when the cells set it at run time only)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return ""


def refuse_unsafe(cells: list[tuple[str, str]], params: list[Param], values: Mapping[str, str]) -> None:
    """Before a run: substitute the run's values through every statement of the cells, as the kernel
    will (console/lang/template.py), so a value the kernel would refuse is a 400 naming it now.
    The kernel still checks each substitution as it runs (macros, includes, branches)."""
    from console.lang import parse_cell  # the package's own entry point, which imports this module's peers

    outside: dict[str, str | None] = {p.name: p.default for p in params}
    variables = _Any({p.name: values.get(p.name, p.default) for p in params})
    for i, (kind, source) in enumerate(cells):
        if "${" not in source:
            continue
        try:  # as the kernel reads the cell: a Python cell's code is substituted too
            stmts = parse_cell(source, i, kind)
        except ParseError:
            continue
        for stmt in stmts:
            try:
                done = substitute_statement(stmt, variables, i, source, outside=outside)
            except ParamRefused as exc:
                raise UnsafeParam(f"{exc.message} (cell {i + 1}, line {exc.line})") from None
            if isinstance(done, Set) and done.type == "text" and outside.get(done.key) is None:
                carried = paramsafe.carries(outside, variables, names_in(stmt.value) if isinstance(stmt, Set) else [])
                if carried:
                    outside[done.key] = None
                else:
                    outside.pop(done.key, None)
            if isinstance(done, Set) and done.type in ("text", "defaultParam") and done.key not in values:
                variables[done.key] = done.value


def quote(value: str) -> str:
    """An MLSQL double-quoted string holding `value` exactly (console/lang/tokens.py's escapes)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def apply(kind: str, source: str, overrides: Mapping[str, str]) -> str:
    """`source` with each overridden parameter set right before its declaration (see the module doc)."""
    if not overrides or not _is_mlsql(kind, source):
        return source
    out, last = [], 0
    for stmt in _declarations(source):
        if stmt.key in overrides:
            out.append(source[last:stmt.offset])
            out.append(f"set {stmt.key} = {quote(overrides[stmt.key])}; ")
            last = stmt.offset
    out.append(source[last:])
    return "".join(out)
