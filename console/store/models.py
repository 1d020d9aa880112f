"""SQLAlchemy models of the notebook store: the tables, their keys and constraints.

Only the repository modules of console/store use these classes; everything outside the store
sees plain records (console/store/records.py). Alembic migrations in store/migrations must
match this file; tests/store/test_store_migrations.py fails when they drift apart.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from console.roles import DEFAULT_SITE_ROLE, ROLES, SITE_ROLES  # noqa: F401 - the store checks roles against these lists

# Explicit constraint names, so migrations can name what they alter on every database.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

CELL_KINDS = ("mlsql", "python", "markdown")


class UTCDateTime(TypeDecorator[datetime]):
    """Timestamps stored as naive UTC and read back timezone-aware.

    SQLite drops time zones and PostgreSQL converts them; storing naive UTC everywhere makes the
    two behave the same.
    """

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=timezone.utc)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UTCDateTime, dict[str, Any]: JSON}


class User(Base):
    """An account. `site_role` (console/roles.py SITE_ROLES) is the one place its rank is kept:
    is_admin is derived from it (records.UserRecord)."""

    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint("site_role IN (" + ", ".join(f"'{r}'" for r in SITE_ROLES) + ")", name="site_role"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    display_name: Mapped[str] = mapped_column(String(128), default="")
    site_role: Mapped[str] = mapped_column(String(16), default=DEFAULT_SITE_ROLE, server_default=DEFAULT_SITE_ROLE)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Folder(Base):
    """An explicit folder, so an empty one survives; folders are also implied by notebook paths."""

    __tablename__ = "folders"

    path: Mapped[str] = mapped_column(String(512), primary_key=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Notebook(Base):
    __tablename__ = "notebooks"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    folder: Mapped[str] = mapped_column(String(512), default="/", index=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    revision: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Ids of the users whose saves since the last history row left none (co-editing, autosave):
    # the next snapshot names them all as its authors. NULL: no such save.
    pending_authors: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    # The notebook's Python packages ({"requirements", "lock_hash"}, console/wire/environment.py); NULL: none.
    environment: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class Cell(Base):
    # Cell ids are unique within a notebook only, so a duplicate or an import keeps its cell ids.
    __tablename__ = "cells"
    __table_args__ = (CheckConstraint("kind IN ('mlsql', 'python', 'markdown')", name="kind"),)

    notebook_id: Mapped[str] = mapped_column(
        ForeignKey("notebooks.id", ondelete="CASCADE"), primary_key=True
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(Text, default="")
    # The cell's result view, e.g. {"mode": "chart", "chart": {...}}; None = the plain table.
    view: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class Revision(Base):
    __tablename__ = "revisions"
    __table_args__ = (UniqueConstraint("notebook_id", "number", name="uq_revisions_notebook_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    notebook_id: Mapped[str] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # {"name": str, "cells": [{"id", "kind", "source", "view"}], "authors": [user id, ...],
    #  "label": str | None}; authors and label are absent from snapshots made before 0005.
    snapshot: Mapped[dict[str, Any]] = mapped_column(JSON)


class Run(Base):
    # cell_id is not a foreign key: a run's output outlives an edit that deletes its cell, and a
    # restored revision brings the cell (same id) back together with its last output.
    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_notebook_cell", "notebook_id", "cell_id", "started_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    notebook_id: Mapped[str] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"))
    cell_id: Mapped[str] = mapped_column(String(32))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    status: Mapped[str] = mapped_column(String(16), default="queued")
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column()
    source: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    output_bytes: Mapped[int] = mapped_column(Integer, default=0)
    hidden_bytes: Mapped[int] = mapped_column(Integer, default=0)
    # The compressed file holding the run's whole output (relative to the data folder); None =
    # all chunks are rows of output_chunks.
    log_file: Mapped[str | None] = mapped_column(String(512), nullable=True)


class RunManifest(Base):
    """What a run read and wrote and ran with: the notebook revision and parameters the server
    queued it with, and the kernel's entries (loads and saves), each with the server's own check
    of its delta version against the lake's log (verified, and why not)."""

    __tablename__ = "run_manifests"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    revision: Mapped[int | None] = mapped_column(Integer)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    entries: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    dropped: Mapped[int] = mapped_column(Integer, default=0)  # entries past the caps, not kept
    lock_hash: Mapped[str] = mapped_column(String(64), default="")  # the notebook environment it ran in ("": base)
    replay_of: Mapped[str] = mapped_column(String(64), default="")  # the recorded run a replay ran as
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class OutputChunk(Base):
    __tablename__ = "output_chunks"
    __table_args__ = (UniqueConstraint("run_id", "seq", name="uq_output_chunks_run_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(128), default="driver")
    stream: Mapped[str] = mapped_column(String(16), default="stdout")
    text: Mapped[str] = mapped_column(Text)
    ts: Mapped[float] = mapped_column(Float)


class MetricPoint(Base):
    __tablename__ = "metric_points"
    __table_args__ = (UniqueConstraint("run_id", "seq", name="uq_metric_points_run_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(128), default="driver")
    step: Mapped[int | None] = mapped_column(Integer)
    values: Mapped[dict[str, Any]] = mapped_column(JSON)
    ts: Mapped[float] = mapped_column(Float)


class Share(Base):
    """A role on one notebook, or on a folder and everything under it."""

    __tablename__ = "shares"
    __table_args__ = (
        CheckConstraint("role IN ('viewer', 'runner', 'editor', 'owner')", name="role"),
        CheckConstraint(
            "(notebook_id IS NULL) <> (folder_path IS NULL)", name="one_target"
        ),
        # No unique key: NULLs never collide in SQL, so set_share keeps one row per target+user.
        Index("ix_shares_user", "user_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    notebook_id: Mapped[str | None] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"))
    folder_path: Mapped[str | None] = mapped_column(String(512))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Link(Base):
    """A revocable read-only link to a notebook and its outputs."""

    __tablename__ = "links"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    notebook_id: Mapped[str] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"), index=True)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column()


class LoginSession(Base):
    """A server-side login: the cookie holds a random token, this row holds only its SHA-256.

    Revoking (logout, password change) sets revoked_at, so a stolen cookie stops working at once.
    """

    __tablename__ = "login_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
    revoked_at: Mapped[datetime | None] = mapped_column()
    ip: Mapped[str] = mapped_column(String(64), default="")
    user_agent: Mapped[str] = mapped_column(String(255), default="")


class LoginFailure(Base):
    """Failed logins per user name and client address, for the growing lockout window."""

    __tablename__ = "login_failures"

    username: Mapped[str] = mapped_column(String(64), primary_key=True)
    ip: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    last_failure_at: Mapped[datetime] = mapped_column(default=utcnow)
    locked_until: Mapped[datetime | None] = mapped_column()


class Job(Base):
    """A notebook run on a schedule as its owner (console/store/jobs.py says how firings are claimed).

    next_run_at is the occurrence due next (NULL while disabled): a process fires it by moving it
    on in a compare-and-set UPDATE, so one occurrence is claimed once however many servers look.
    running_run_id is the job's one slot: the job run now holding it (NULL when none runs).
    """

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint("schedule_kind IN ('cron', 'every')", name="schedule_kind"),
        CheckConstraint("overlap IN ('skip', 'queue')", name="overlap"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    notebook_id: Mapped[str] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"), index=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    schedule_kind: Mapped[str] = mapped_column(String(16))
    cron: Mapped[str] = mapped_column(String(128), default="")
    every_minutes: Mapped[int | None] = mapped_column(Integer)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    retries: Mapped[int] = mapped_column(Integer, default=0)
    retry_delay_seconds: Mapped[int] = mapped_column(Integer, default=0)  # between a failed attempt and the next
    timeout_seconds: Mapped[int] = mapped_column(Integer, default=3600)
    overlap: Mapped[str] = mapped_column(String(8), default="skip")
    webhook_url: Mapped[str] = mapped_column(String(2048), default="")
    notify_success: Mapped[bool] = mapped_column(Boolean, default=False)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_reason: Mapped[str] = mapped_column(String(512), default="")
    next_run_at: Mapped[datetime | None] = mapped_column(index=True)
    running_run_id: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class JobRun(Base):
    """One attempt of a job: its trigger, parameters, the notebook revision it ran, the cell runs
    it made (runs.id, in order), how it ended and the webhook's delivery. A running one belongs to
    lease_holder until lease_until; a lapsed lease means its server died (status interrupted)."""

    __tablename__ = "job_runs"
    __table_args__ = (
        # One row per occurrence and attempt: a second process claiming the same firing fails here.
        UniqueConstraint("job_id", "scheduled_for", "attempt", name="uq_job_runs_occurrence"),
        Index("ix_job_runs_job_started", "job_id", "started_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    trigger: Mapped[str] = mapped_column(String(16))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    scheduled_for: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column()
    ended_at: Mapped[datetime | None] = mapped_column()
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    revision: Mapped[int | None] = mapped_column(Integer)
    run_ids: Mapped[list[str]] = mapped_column(JSON)
    error: Mapped[str] = mapped_column(Text, default="")
    triggered_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    webhook: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    lease_holder: Mapped[str] = mapped_column(String(128), default="")
    lease_until: Mapped[datetime | None] = mapped_column()
    not_before: Mapped[datetime | None] = mapped_column()  # a queued retry waits for its job's retry delay
    lock_hash: Mapped[str] = mapped_column(String(64), default="")  # the notebook environment's lock it ran in


class Comment(Base):
    """A comment on a cell: a thread's first comment (thread_id NULL), or a reply in a thread.

    cell_id is not a foreign key, as for runs: a comment outlives an edit that deletes its cell
    (the page shows it "on a deleted cell"), and a restored revision brings the cell (same id) back
    to its comments. A thread may be anchored to a range of its cell's text (anchor_start and
    anchor_end, offsets in the source when it was made, and the text quoted then); resolved, and
    who resolved it, are the thread's own, kept on its first comment. A first comment its author
    deleted while replies remained stays as deleted (no text), so the replies keep their thread.
    """

    __tablename__ = "comments"
    __table_args__ = (Index("ix_comments_notebook_created", "notebook_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    notebook_id: Mapped[str] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"))
    cell_id: Mapped[str] = mapped_column(String(32))
    thread_id: Mapped[str | None] = mapped_column(ForeignKey("comments.id", ondelete="CASCADE"), index=True)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    text: Mapped[str] = mapped_column(Text, default="")
    anchor_start: Mapped[int | None] = mapped_column(Integer)
    anchor_end: Mapped[int | None] = mapped_column(Integer)
    anchor_text: Mapped[str | None] = mapped_column(Text)
    resolved: Mapped[bool] = mapped_column(Boolean, default=False)
    resolved_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    resolved_at: Mapped[datetime | None] = mapped_column()
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    edited_at: Mapped[datetime | None] = mapped_column()


class Dashboard(Base):
    """A notebook's dashboard: the tiles pinned from its cells' results and charts, in order.

    One per notebook (its id is the notebook's). tiles is a list of {cell_id, kind, width, height}
    checked by console/store/dashboards.py; cell ids are no foreign keys, as for comments: a tile
    outlives an edit that deletes its cell (the page says so) and shows it again when a revision
    brings the cell back. revision counts the dashboard's own changes, so two editors arranging
    it at once cannot overwrite each other unseen.
    """

    __tablename__ = "dashboards"

    notebook_id: Mapped[str] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"), primary_key=True)
    tiles: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
