"""Revisions: the snapshot each save leaves behind; list, read, and restore as a new revision."""
from __future__ import annotations

from sqlalchemy import select

from console.store._rows import clean_cells, lock_notebook, save_revision
from console.store.db import StoreBase
from console.store.errors import NotFound
from console.store.models import Notebook, Revision
from console.store.records import NotebookRecord, RevisionInfo, RevisionRecord


def _info(r: Revision) -> RevisionInfo:
    return RevisionInfo(id=r.id, notebook_id=r.notebook_id, number=r.number, author_id=r.author_id,
                        created_at=r.created_at)


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
            r = s.scalars(
                select(Revision).where(Revision.notebook_id == notebook_id, Revision.number == number)
            ).one_or_none()
            if r is None:
                raise NotFound(f"no revision {number} of notebook {notebook_id!r}")
            return RevisionRecord(**_info(r).__dict__, snapshot=r.snapshot)

    def restore_revision(
        self, notebook_id: str, number: int, base_revision: int | None = None, author_id: int | None = None
    ) -> NotebookRecord:
        """Make the content of revision `number` current again, as a new revision; history stays."""
        with self._write() as s:
            nb = lock_notebook(s, notebook_id, base_revision)
            r = s.scalars(
                select(Revision).where(Revision.notebook_id == notebook_id, Revision.number == number)
            ).one_or_none()
            if r is None:
                raise NotFound(f"no revision {number} of notebook {notebook_id!r}")
            cells = clean_cells(r.snapshot.get("cells", []))
            return save_revision(s, nb, base_revision, author_id, r.snapshot.get("name") or nb.name, cells)
