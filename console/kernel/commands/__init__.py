"""`!` commands: `!show`, `!desc`, `!assert`, `!if … !fi`, `!fs`, `!sh`, macros and the rest.

run_command(session, stmt, run) runs one; Flow tracks the branches of !if/!elif/!else/!fi so
the session skips the statements of a branch not taken. Each module registers its commands in
base.COMMANDS; a name that is neither a command nor a macro fails naming those that exist.
"""
from __future__ import annotations

import difflib

from console import lang
from console.kernel.commands import asserts, delta, fs, pip, shell, show, tables  # noqa: F401  (they register)
from console.kernel.commands.base import COMMANDS
from console.kernel.commands.flow import FLOW_COMMANDS, Flow
from console.kernel.commands.macros import UNAVAILABLE, find_macro, run_macro
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost

__all__ = ["COMMANDS", "FLOW_COMMANDS", "Flow", "command_names", "run_command"]


def command_names() -> list[str]:
    """Every built-in command as written (`!show`, `!if` …), for errors, docs and completion."""
    names = {spec.name for spec in COMMANDS.values()} | {"python", "ray"}
    return sorted(names, key=str.lower)


def run_command(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    key = stmt.name.lower()
    spec = COMMANDS.get(key)
    if spec is not None:
        spec.handler(session, stmt, run)
        return
    # Built-ins first: a variable that happens to be called `show` must not change what !show does.
    text = find_macro(session, stmt.name)
    if text is not None:
        run_macro(session, stmt, run, text)
        return
    if key in UNAVAILABLE:
        raise CellError("data", f"!{stmt.name}: {UNAVAILABLE[key]}", stmt.line, stmt.column)
    names = command_names()
    close = difflib.get_close_matches(stmt.name.lower(), [n.lower() for n in names], n=1, cutoff=0.6)
    hint = f" (did you mean !{next(n for n in names if n.lower() == close[0])}?)" if close else ""
    raise CellError("parse", f"unknown command !{stmt.name}{hint}; commands: " + ", ".join("!" + n for n in names)
                    + ", or a macro of your own (set name='''...''';)", stmt.line, stmt.column)
