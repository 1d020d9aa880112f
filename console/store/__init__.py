"""The notebook store: SQLAlchemy models, Alembic migrations and the repository (all SQL lives here).

Everything outside this package uses `Store` and the records it returns; nothing else opens a
database session.
"""
from ._rows import valid_cell_id
from .errors import Conflict, Exists, Invalid, NotFound, StoreError
from .models import CELL_KINDS, ROLES
from .paths import normalize_folder
from .records import (
    CellRecord,
    FolderListing,
    LinkRecord,
    LoginSessionRecord,
    MetricRecord,
    NotebookInfo,
    NotebookRecord,
    OutputRecord,
    RevisionInfo,
    RevisionRecord,
    RunRecord,
    ShareRecord,
    UserRecord,
)
from .runs import FINAL_STATES, RUN_STATES
from .store import Store

__all__ = [
    "CELL_KINDS", "ROLES", "RUN_STATES", "FINAL_STATES", "Store", "StoreError", "NotFound", "Invalid",
    "Conflict", "Exists", "normalize_folder", "valid_cell_id", "CellRecord", "FolderListing", "LinkRecord", "LoginSessionRecord", "MetricRecord",
    "NotebookInfo", "NotebookRecord", "OutputRecord", "RevisionInfo", "RevisionRecord", "RunRecord",
    "ShareRecord", "UserRecord",
]
