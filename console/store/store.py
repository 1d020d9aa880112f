"""The Store: one object holding every repository operation, over any SQLAlchemy URL."""
from __future__ import annotations

from .cells import CellsMixin
from .folders import FoldersMixin
from .logins import LoginsMixin
from .notebooks import NotebooksMixin
from .revisions import RevisionsMixin
from .runs import RunsMixin
from .sharing import SharingMixin
from .users import UsersMixin


class Store(
    UsersMixin, NotebooksMixin, FoldersMixin, CellsMixin, RevisionsMixin, RunsMixin, SharingMixin,
    LoginsMixin,
):
    """`Store(url)` connects, applies migrations, and offers the operations of each mixin.

    Thread-safe: every call runs in its own short transaction and returns plain records.
    """
