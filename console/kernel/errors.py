"""The engine's internal user-error exception; run_cell turns it into an ErrorEvent."""
from __future__ import annotations

from console.messages import ErrorEvent


class CellError(Exception):
    """A user error while running a statement: kind as in ErrorEvent, line/column in the cell."""

    def __init__(self, kind: str, message: str, line: int | None = None, column: int | None = None,
                 traceback: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line
        self.column = column
        self.traceback = traceback

    def event(self) -> ErrorEvent:
        return ErrorEvent(kind=self.kind, message=self.message, line=self.line, column=self.column,
                          traceback=self.traceback)
