"""The notebook store: SQLAlchemy models, Alembic migrations and the repository (all SQL lives here).

Everything outside this package uses `Store` and the records it returns; nothing else opens a
database session.

Runs in: the server and the CLI; no kernel opens it (include asks the server).
"""
from console.store._rows import valid_cell_id
from console.store.errors import Conflict, Exists, Invalid, NotFound, StoreError
from console.store.models import CELL_KINDS, ROLES
from console.store.paths import normalize_folder
from console.store.records import (
    CellRecord, FolderListing, LinkRecord, LoginSessionRecord, MetricRecord, NotebookInfo, NotebookRecord, OutputRecord,
    RevisionInfo, RevisionRecord, RunRecord, ShareRecord, UserRecord,
)
from console.store.runs import FINAL_STATES, RUN_STATES
from console.store.store import Store

__all__ = [
    "CELL_KINDS", "ROLES", "RUN_STATES", "FINAL_STATES", "Store", "StoreError", "NotFound", "Invalid",
    "Conflict", "Exists", "normalize_folder", "valid_cell_id", "CellRecord", "FolderListing", "LinkRecord",
    "LoginSessionRecord", "MetricRecord",
    "NotebookInfo", "NotebookRecord", "OutputRecord", "RevisionInfo", "RevisionRecord", "RunRecord",
    "ShareRecord", "UserRecord",
]
