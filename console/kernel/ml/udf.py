"""`register ScriptUDF.`` as f where lang="python" and code='''…'''`: Python functions in SQL."""
from __future__ import annotations

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost


def register_script_udf(session: SessionHost, stmt: lang.Register, run: CellRun) -> None:
    raise CellError("parse", "register ScriptUDF is not built yet", stmt.line, stmt.column)
