"""The engine's user-error exception, and how a fault of ours is reported: logged with an id.

A user sees what they can act on (CellError: kind, message, line, column, their own traceback).
Anything else raised while a cell runs is a fault of ours: its traceback goes to the log under a
short random id, and the cell's Failure names only that id, so the server's traceback never
reaches a browser.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING
import secrets

from console.errors import UserError
from console.ids import FaultId
from console.wire.cell import Failure

if TYPE_CHECKING:
    from console import lang

log = logging.getLogger(__name__)


class CellError(UserError):
    """A user error while running a statement: kind as in Failure, line/column in the cell."""

    def __init__(self, kind: str, message: str, line: int | None = None, column: int | None = None,
                 traceback: str = "") -> None:
        super().__init__(message, line, column, traceback, kind=kind)


def internal_error(exc: BaseException, where: str = "") -> Failure:
    """Log exc with its traceback under a new id; the Failure a user gets says only the id."""
    fault = FaultId(secrets.token_hex(4))
    log.error("internal error %s%s: %s: %s", fault, f" in {where}" if where else "", type(exc).__name__, exc,
              exc_info=(type(exc), exc, exc.__traceback__))
    return Failure(kind="kernel", message=f"internal error {fault}; see the server log")


def data_error_position(stmt: "lang.Statement", message: str) -> tuple[int, int]:
    """Point a load/save error at the format or the path it is about, else at the statement."""
    from console import lang

    fmt, path = getattr(stmt, "format", None), getattr(stmt, "path", None)
    if fmt and "format" in message:
        return lang.template.position_in(stmt, fmt + ".")
    if path and path in message:
        return lang.template.position_in(stmt, path)
    return stmt.line, stmt.column
