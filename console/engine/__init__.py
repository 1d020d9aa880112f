"""The engine: a session's catalog of Arrow tables, its settings and variables, and cell execution.

    Session(cfg, emit, session_id="default", notebook_loader=None).run_cell(source, kind, cell) -> CellOutcome
    headless.run_file(path, cfg, cell=None, out=print) -> exit code
"""
from __future__ import annotations

from .errors import CellError
from .session import CellOutcome, NotebookLoader, Session

__all__ = ["CellError", "CellOutcome", "NotebookLoader", "Session"]
