"""`register Ray.`model` as f where registerCode='''…''' and predictCode='''…'''`: a model as a SQL function."""
from __future__ import annotations

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost


def register(session: SessionHost, stmt: lang.Register, run: CellRun) -> None:
    raise CellError("parse", "register Ray is not built yet", stmt.line, stmt.column)
