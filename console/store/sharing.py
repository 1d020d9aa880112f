"""Shares (a role for a user on a notebook or a folder) and revocable read-only links.

Minimal CRUD; deciding who may do what from these rows is the auth layer's job.
"""
from __future__ import annotations

import secrets

from sqlalchemy import select

from console.store.db import StoreBase
from console.store.errors import Invalid, NotFound
from console.store.folders import below
from console.store._rows import info
from console.store.models import ROLES, Folder, Link, Notebook, Share, User, utcnow
from console.store.paths import normalize_folder
from console.store.records import LinkRecord, NotebookInfo, ShareRecord


def _share(sh: Share) -> ShareRecord:
    return ShareRecord(id=sh.id, notebook_id=sh.notebook_id, folder_path=sh.folder_path,
                       user_id=sh.user_id, role=sh.role, created_at=sh.created_at)


def _link(ln: Link) -> LinkRecord:
    return LinkRecord(token=ln.token, notebook_id=ln.notebook_id, created_by=ln.created_by,
                      created_at=ln.created_at, revoked_at=ln.revoked_at)


def _target(notebook_id: str | None, folder_path: str | None) -> tuple[str | None, str | None]:
    if (notebook_id is None) == (folder_path is None):
        raise Invalid("share either a notebook or a folder")
    return notebook_id, normalize_folder(folder_path) if folder_path is not None else None


class SharingMixin(StoreBase):
    def set_share(
        self, user_id: int, role: str, notebook_id: str | None = None, folder_path: str | None = None
    ) -> ShareRecord:
        """Give user_id `role` on a notebook or a folder; replaces the user's earlier role there."""
        if role not in ROLES:
            raise Invalid(f"role must be one of {', '.join(ROLES)}")
        notebook_id, folder_path = _target(notebook_id, folder_path)
        with self._write() as s:
            if s.get(User, user_id) is None:
                raise NotFound(f"no user {user_id!r}")
            if notebook_id is not None and s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            sh = s.scalars(select(Share).where(
                Share.user_id == user_id,
                Share.notebook_id == notebook_id if notebook_id else Share.notebook_id.is_(None),
                Share.folder_path == folder_path if folder_path else Share.folder_path.is_(None),
            )).one_or_none()
            if sh is None:
                sh = Share(user_id=user_id, notebook_id=notebook_id, folder_path=folder_path, role=role,
                           created_at=utcnow())
                s.add(sh)
            else:
                sh.role = role
            s.flush()
            return _share(sh)

    def list_shares(
        self, notebook_id: str | None = None, folder_path: str | None = None, user_id: int | None = None
    ) -> list[ShareRecord]:
        """Shares filtered by any of notebook, folder (exact path) and user."""
        q = select(Share).order_by(Share.id)
        if notebook_id is not None:
            q = q.where(Share.notebook_id == notebook_id)
        if folder_path is not None:
            q = q.where(Share.folder_path == normalize_folder(folder_path))
        if user_id is not None:
            q = q.where(Share.user_id == user_id)
        with self._read() as s:
            return [_share(sh) for sh in s.scalars(q)]

    def get_share(self, share_id: int) -> ShareRecord:
        with self._read() as s:
            sh = s.get(Share, share_id)
            if sh is None:
                raise NotFound(f"no share {share_id!r}")
            return _share(sh)

    def delete_share(self, share_id: int) -> None:
        with self._write() as s:
            sh = s.get(Share, share_id)
            if sh is None:
                raise NotFound(f"no share {share_id!r}")
            s.delete(sh)

    def create_link(self, notebook_id: str, created_by: int | None = None) -> LinkRecord:
        with self._write() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            ln = Link(token=secrets.token_urlsafe(32), notebook_id=notebook_id, created_by=created_by,
                      created_at=utcnow())
            s.add(ln)
            s.flush()
            return _link(ln)

    def get_link(self, token: str) -> LinkRecord:
        """The link with this token, revoked or not (check .active)."""
        with self._read() as s:
            ln = s.scalars(select(Link).where(Link.token == token)).one_or_none()
            if ln is None:
                raise NotFound("no such link")
            return _link(ln)

    def list_links(self, notebook_id: str) -> list[LinkRecord]:
        with self._read() as s:
            return [_link(ln) for ln in s.scalars(
                select(Link).where(Link.notebook_id == notebook_id).order_by(Link.id))]

    def revoke_link(self, token: str) -> LinkRecord:
        with self._write() as s:
            ln = s.scalars(select(Link).where(Link.token == token)).one_or_none()
            if ln is None:
                raise NotFound("no such link")
            if ln.revoked_at is None:
                ln.revoked_at = utcnow()
            s.flush()
            return _link(ln)

    def owned_folders(self, user_id: int) -> list[str]:
        """Paths of the explicit folders this user created (their owner role covers what is below)."""
        with self._read() as s:
            return list(s.scalars(select(Folder.path).where(Folder.owner_id == user_id).order_by(Folder.path)))

    def notebooks_under(self, folder: str = "/") -> list[NotebookInfo]:
        """Every notebook at or below `folder` (for listings filtered by what a user may see)."""
        folder = normalize_folder(folder)
        q = select(Notebook).order_by(Notebook.folder, Notebook.name, Notebook.id)
        if folder != "/":
            q = q.where(below(Notebook.folder, folder))  # case-sensitive, no LIKE (see folders.below)
        with self._read() as s:
            return [info(nb) for nb in s.scalars(q)]

    def all_folder_paths(self) -> list[str]:
        """Every explicit folder and every folder a notebook lives in."""
        with self._read() as s:
            paths = set(s.scalars(select(Folder.path)))
            paths |= set(s.scalars(select(Notebook.folder).distinct()))
            return sorted(paths)
