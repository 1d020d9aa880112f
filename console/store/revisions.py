"""Revisions: the history of a notebook. List, read, name, settle, and restore as a new revision.

Not every save leaves a history row: co-editing and autosave save with snapshot=False
(console/store/_rows.py), which counts a revision number and remembers the author. A row is made
when the burst of edits settles (`settle_notebooks`, called by the server's settler after N idle
seconds), before a run and for a named version (`snapshot_notebook`), and by every save that asks
for one (REST writes, structural edits, restore).
"""
from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from console.store._rows import add_snapshot, as_dicts, clean_cells, load_cells, lock_notebook, save_revision
from console.store.db import StoreBase
from console.store.errors import Invalid, NotFound
from console.store.models import Notebook, Revision, utcnow
from console.store.records import NotebookRecord, RevisionInfo, RevisionRecord

MAX_LABEL = 200


def _info(r: Revision) -> RevisionInfo:
    snap = r.snapshot or {}
    authors = snap.get("authors")
    if not isinstance(authors, list):  # a row from before authors were kept: its one author
        authors = [r.author_id] if r.author_id is not None else []
    label = snap.get("label")
    return RevisionInfo(id=r.id, notebook_id=r.notebook_id, number=r.number, author_id=r.author_id,
                        created_at=r.created_at, authors=tuple(a for a in authors if isinstance(a, int)),
                        label=label if isinstance(label, str) else None)


def check_label(label: object) -> str | None:
    """A version's name: text of 1-200 characters once trimmed; None or "" for no name."""
    if label is None:
        return None
    if not isinstance(label, str):
        raise Invalid("a version's label must be text")
    label = label.strip()
    if len(label) > MAX_LABEL:
        raise Invalid(f"a version's label has at most {MAX_LABEL} characters (this one has {len(label)})")
    return label or None


def _row(s: Session, notebook_id: str, number: int) -> Revision | None:
    return s.scalars(
        select(Revision).where(Revision.notebook_id == notebook_id, Revision.number == number)
    ).one_or_none()


def _settle_locked(s: Session, nb: Notebook, author_id: int | None, label: str | None) -> Revision:
    """The history row of nb's current revision: made now when there is none, named when asked."""
    row = _row(s, nb.id, nb.revision)
    if row is None:
        row = add_snapshot(s, nb, author_id, as_dicts(load_cells(s, nb.id)), label)
    elif label is not None:
        row.snapshot = {**row.snapshot, "label": label}  # a new dict: JSON columns see assignments only
    s.flush()
    return row


class RevisionsMixin(StoreBase):
    def list_revisions(self, notebook_id: str, limit: int | None = None) -> list[RevisionInfo]:
        """Newest first."""
        q = select(Revision).where(Revision.notebook_id == notebook_id).order_by(Revision.number.desc())
        if limit is not None:
            q = q.limit(limit)
        with self._read() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            return [_info(r) for r in s.scalars(q)]

    def get_revision(self, notebook_id: str, number: int) -> RevisionRecord:
        with self._read() as s:
            r = _row(s, notebook_id, number)
            if r is None:
                raise NotFound(f"no revision {number} of notebook {notebook_id!r}")
            return RevisionRecord(**_info(r).__dict__, snapshot=r.snapshot)

    def snapshot_notebook(self, notebook_id: str, author_id: int | None = None,
                          label: str | None = None) -> RevisionInfo:
        """Make the current content a history row (a run, "Save version…"); `label` names it.

        When the current revision has a row already, no second one is made: a label renames it.
        """
        clean = check_label(label)
        with self._write() as s:
            nb = lock_notebook(s, notebook_id)
            return _info(_settle_locked(s, nb, author_id, clean))

    def unsettled_notebooks(self, idle_seconds: float, now: datetime | None = None) -> list[str]:
        """Notebooks whose last save left no history row and is at least `idle_seconds` old."""
        cutoff = (now or utcnow()) - timedelta(seconds=idle_seconds)
        last = select(func.max(Revision.number)).where(Revision.notebook_id == Notebook.id).scalar_subquery()
        q = (select(Notebook.id)
             .where(Notebook.updated_at <= cutoff, Notebook.revision > func.coalesce(last, 0))
             .order_by(Notebook.updated_at))
        with self._read() as s:
            return list(s.scalars(q))

    def settle_notebooks(self, idle_seconds: float, now: datetime | None = None) -> list[RevisionInfo]:
        """A history row for each notebook whose burst of edits has been idle for `idle_seconds`.

        Each notebook is settled in its own transaction and checked again under its lock, so an
        edit that arrives meanwhile (the notebook is no longer idle) waits for the next round.
        """
        cutoff = (now or utcnow()) - timedelta(seconds=idle_seconds)
        made = []
        for notebook_id in self.unsettled_notebooks(idle_seconds, now):
            with self._write() as s:
                try:
                    nb = lock_notebook(s, notebook_id)
                except NotFound:  # deleted meanwhile
                    continue
                if nb.updated_at > cutoff or _row(s, nb.id, nb.revision) is not None:
                    continue
                made.append(_info(_settle_locked(s, nb, None, None)))
        return made

    def restore_revision(
        self, notebook_id: str, number: int, base_revision: int | None = None, author_id: int | None = None
    ) -> NotebookRecord:
        """Make the content of revision `number` current again, as a new revision; history stays.

        Unsettled edits are kept first as a history row of their own, so a restore loses nothing.
        """
        with self._write() as s:
            nb = lock_notebook(s, notebook_id, base_revision)
            r = _row(s, notebook_id, number)
            if r is None:
                raise NotFound(f"no revision {number} of notebook {notebook_id!r}")
            snapshot = dict(r.snapshot)
            if _row(s, nb.id, nb.revision) is None:
                _settle_locked(s, nb, None, None)
            cells = clean_cells(snapshot.get("cells", []))
            if "environment" in snapshot:  # rows from before 0011 say nothing of it: the current one stays
                nb.environment = snapshot["environment"]
            return save_revision(s, nb, base_revision, author_id, snapshot.get("name") or nb.name, cells)
