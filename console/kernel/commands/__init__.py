"""`!` commands: `!show`, `!desc`, `!assert`, `!if … !fi`, `!fs`, `!sh`, macros and the rest.

run_command(session, stmt, run) runs one; Flow tracks the branches of !if/!elif/!else/!fi so
the session skips the statements of a branch not taken.
"""
from __future__ import annotations

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost


class Flow:
    """The open !if blocks of the running cell."""

    def skips(self, stmt: lang.Statement) -> bool:
        """True when stmt sits in a branch not taken (flow commands themselves are never skipped)."""
        return False


def run_command(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    raise CellError("parse", f"unknown command !{stmt.name}", stmt.line, stmt.column)
