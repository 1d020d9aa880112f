"""What every `!` command module shares: the registry, where an error points, small table helpers."""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

import pyarrow as pa

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost
from console.wire.cell import Output

Handler = Callable[[SessionHost, lang.Command, CellRun], None]


class Spec:
    """A built-in command: its handler, a one-line doc and an example (the docs and !show commands list them)."""

    def __init__(self, name: str, handler: Handler, doc: str, example: str) -> None:
        self.name = name
        self.handler = handler
        self.doc = doc
        self.example = example


COMMANDS: dict[str, Spec] = {}  # lower-case name -> spec; Byzer users write !unCache and !uncache alike


def command(*names: str, doc: str, example: str) -> Callable[[Handler], Handler]:
    """Register a handler under one or more command names (variants such as assertNotNullThrow share one)."""

    def deco(fn: Handler) -> Handler:
        for name in names:
            COMMANDS[name.lower()] = Spec(name, fn, doc, example)
        return fn

    return deco


def at(stmt: lang.Command, needle: str | None = None) -> tuple[int, int]:
    """Cell line/column of `needle` inside the command (the command's start when absent)."""
    if not needle:
        return stmt.line, stmt.column
    return lang.template.position_in(stmt, needle)


def fail(stmt: lang.Command, message: str, needle: str | None = None, kind: str = "data") -> CellError:
    return CellError(kind, message, *at(stmt, needle))


def usage(stmt: lang.Command, text: str) -> CellError:
    """A command called with the wrong arguments: says how it is called."""
    return CellError("parse", f"!{stmt.name}: {text}", stmt.line, stmt.column)


def emit_text(session: SessionHost, text: str, stream: str = "stdout") -> None:
    if text and not text.endswith("\n"):
        text += "\n"
    session.emit(Output(text=text, source="engine", stream=stream))


def rows_table(columns: list[str], rows: list[tuple[Any, ...]] | list[list[Any]],
               types: Mapping[str, pa.DataType] | None = None) -> pa.Table:
    """A table from rows; an empty one keeps its columns (as strings unless `types` says otherwise)."""
    types = types or {}
    data = {c: [r[i] for r in rows] for i, c in enumerate(columns)}
    return pa.table({c: pa.array(v, types.get(c, pa.string() if not v else None)) for c, v in data.items()})


def named_args(stmt: lang.Command, args: tuple[str, ...] | list[str]) -> dict[str, str]:
    """Byzer's named form `!cmd _ -k v -k2 v2`: {k: v}. Positional arguments are an error."""
    out: dict[str, str] = {}
    items = list(args)
    while items:
        key = items.pop(0)
        if not key.startswith("-") or len(key) < 2 or not items:
            raise usage(stmt, f"expected -name value pairs after '_', found {key!r}")
        out[key[1:]] = items.pop(0)
    return out


def table_arg(session: SessionHost, stmt: lang.Command, name: str) -> pa.Table:
    return session.require(name, stmt)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def quote_ident(name: str) -> str:
    """A name as a Spark SQL identifier (backquoted unless plain)."""
    return name if _IDENT.fullmatch(name) else "`" + name.replace("`", "``") + "`"
