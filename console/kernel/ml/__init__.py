"""Machine learning in MLSQL: `train`, `predict` and `register <Algorithm>.`path` as f`."""
from __future__ import annotations

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost


def run_verb(session: SessionHost, stmt: lang.Run, run: CellRun) -> None:
    raise CellError("parse", f"unknown algorithm {stmt.et!r}", stmt.line, stmt.column)


def register_model(session: SessionHost, stmt: lang.Register, run: CellRun) -> None:
    raise CellError("parse", f"unknown algorithm {stmt.et!r}", stmt.line, stmt.column)
