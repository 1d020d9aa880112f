"""Plain records the store returns: dataclasses detached from any database session."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from console.ids import CellId, NotebookId, RunId, UserId


@dataclass(frozen=True)
class UserRecord:
    id: int
    username: str
    display_name: str
    site_role: str  # console/roles.py SITE_ROLES: reader, member or admin
    created_at: datetime
    has_password: bool = False

    @property
    def is_admin(self) -> bool:
        """Derived from the site role, the one place an account's rank is kept."""
        return self.site_role == "admin"


@dataclass(frozen=True)
class CellRecord:
    id: str
    kind: str
    source: str
    position: int
    view: dict[str, Any] | None = None  # how its result is shown (console/store/views.py); None: the table


@dataclass(frozen=True)
class NotebookInfo:
    """A notebook without its cells, as folder listings show it."""

    id: str
    name: str
    folder: str
    owner_id: int | None
    revision: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class NotebookRecord(NotebookInfo):
    cells: list[CellRecord] = field(default_factory=list)


@dataclass(frozen=True)
class RevisionInfo:
    id: int
    notebook_id: str
    number: int
    author_id: int | None  # who made the history row (the last author when edits settled)
    created_at: datetime
    authors: tuple[int, ...] = ()  # everyone whose saves this revision gathers, first editor first
    label: str | None = None  # a version's name ("Save version…"); None for a settled burst of edits


@dataclass(frozen=True)
class RevisionRecord(RevisionInfo):
    # {"name": str, "cells": [{"id", "kind", "source", "view"}], "authors": [...], "label": ...}
    snapshot: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OutputRecord:
    run_id: RunId
    seq: int
    text: str
    source: str
    stream: str
    ts: float


@dataclass(frozen=True)
class MetricRecord:
    run_id: RunId
    seq: int
    values: dict[str, Any]
    source: str
    step: int | None
    ts: float


@dataclass(frozen=True)
class RunRecord:
    id: RunId
    notebook_id: NotebookId
    cell_id: CellId
    user_id: UserId | None
    status: str
    started_at: datetime
    finished_at: datetime | None
    source: str
    error: dict[str, Any] | None
    result: dict[str, Any] | None
    output_bytes: int
    hidden_bytes: int
    # Filled only where asked for (latest_runs(..., with_outputs=True)).
    outputs: list[OutputRecord] | None = None
    metrics: list[MetricRecord] | None = None


@dataclass(frozen=True)
class FolderListing:
    """What a folder holds: its direct subfolders (paths) and notebooks."""

    path: str
    folders: list[str]
    notebooks: list[NotebookInfo]


@dataclass(frozen=True)
class ShareRecord:
    id: int
    notebook_id: str | None
    folder_path: str | None
    user_id: int
    role: str
    created_at: datetime


@dataclass(frozen=True)
class LinkRecord:
    token: str
    notebook_id: str
    created_by: int | None
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class LoginSessionRecord:
    id: str
    user_id: int
    csrf_token: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    revoked_at: datetime | None
    ip: str
    user_agent: str
