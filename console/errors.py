"""The one shape of a user's error: what went wrong in a cell, said so its author can act on it.

Every layer that runs a user's words raises a subclass: the language (lang.ParseError: a
statement that does not parse), the sources (sources.base.SourceError: a missing path, a bad
option), the notebook's environment (envlayers.build.EnvError) and the kernel (kernel.errors.CellError,
and PythonCellError for a Python job). The session catches UserError once and sends its event();
anything else raised under a cell is a fault of ours, logged under an id (kernel/errors.py).

Here, not in kernel/, because lang/ and sources/ sit below the kernel and must not import it.
"""
from __future__ import annotations

from console.wire.cell import Failure


class UserError(Exception):
    """kind: as Failure's (parse, sql, python, data, worker, env, schema, interrupted, …);
    line/column: 1-based within the cell, None when unknown; traceback: the user's part only."""

    kind = "user"

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 traceback: str = "", kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.traceback = traceback
        if kind is not None:
            self.kind = kind

    def event(self) -> Failure:
        return Failure(kind=self.kind, message=self.message, line=self.line, column=self.column,
                          traceback=self.traceback)


__all__ = ["UserError"]
