"""The Store: one object holding every repository operation, over any SQLAlchemy URL."""
from __future__ import annotations

from console.store.cells import CellsMixin
from console.store.comments import CommentsMixin
from console.store.dashboards import DashboardsMixin
from console.store.environments import EnvironmentsMixin
from console.store.folders import FoldersMixin
from console.store.jobs import JobsMixin
from console.store.logins import LoginsMixin
from console.store.manifests import ManifestsMixin
from console.store.notebooks import NotebooksMixin
from console.store.revisions import RevisionsMixin
from console.store.runs import RunsMixin
from console.store.sharing import SharingMixin
from console.store.users import UsersMixin


class Store(
    UsersMixin, NotebooksMixin, FoldersMixin, CellsMixin, RevisionsMixin, RunsMixin, SharingMixin,
    LoginsMixin, JobsMixin, CommentsMixin, DashboardsMixin, ManifestsMixin, EnvironmentsMixin,
):
    """`Store(url)` connects, applies migrations, and offers the operations of each mixin.

    Thread-safe: every call runs in its own short transaction and returns plain records.
    """
