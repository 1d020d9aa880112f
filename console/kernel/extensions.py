"""`run t as <Extension>.`path` [where …] [as out]`: the extensions other than Ray and TableRepartition."""
from __future__ import annotations

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost


def run_extension(session: SessionHost, stmt: lang.Run, run: CellRun) -> None:
    raise CellError("parse", f"unknown extension {stmt.et!r}", stmt.line, stmt.column)
