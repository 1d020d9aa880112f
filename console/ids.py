"""Identifiers, one NewType each, so a signature says which id it takes (runs everywhere).

At run time each is its plain type (a str or an int); the types only keep a cell id from being
passed where a run id belongs when mypy checks the seams.
"""
from __future__ import annotations

from typing import NewType

NotebookId = NewType("NotebookId", str)
CellId = NewType("CellId", str)
RunId = NewType("RunId", str)
UserId = NewType("UserId", int)
# One kernel's session: f"{notebook_id}-u{user_id}"; names its cache folder and its cell workers.
SessionId = NewType("SessionId", str)
# The id an internal error is logged under and shown with, so a report can be found in the log.
FaultId = NewType("FaultId", str)
