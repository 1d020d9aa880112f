"""Folders: listing by folder, and explicit folders that can be created, renamed and deleted.

A folder exists when a row in `folders` names it or when a notebook lives at or below it, so
moving a notebook to /a/b makes /a and /a/b appear without extra bookkeeping.
"""
from __future__ import annotations

from sqlalchemy import ColumnElement, delete, func, or_, select
from sqlalchemy.orm import QueryableAttribute, Session

from console.store._rows import info
from console.store.db import StoreBase
from console.store.errors import Exists, Invalid, NotFound
from console.store.models import Folder, Notebook, Share, utcnow
from console.store.paths import child_of, is_under, normalize_folder
from console.store.records import FolderListing


def below(column: QueryableAttribute[str | None], folder: str) -> ColumnElement[bool]:
    """SQL condition: column is `folder` or a path inside it, compared case-sensitively.

    Not LIKE: SQLite's LIKE ignores ASCII case, so renaming /team also moved another user's
    /TEAM/proj (and `%`, `_` and `\\` in a name would be wildcards or escapes unless escaped).
    Comparing the column's first characters with the prefix is exact on SQLite and PostgreSQL.
    """
    if folder == "/":
        return column.is_not(None)
    prefix = folder + "/"
    return or_(column == folder, func.substr(column, 1, len(prefix)) == prefix)


def _all_paths(s: Session, folder: str) -> set[str]:
    paths = set(s.scalars(select(Folder.path).where(below(Folder.path, folder))))
    paths |= set(s.scalars(select(Notebook.folder).where(below(Notebook.folder, folder)).distinct()))
    return paths


class FoldersMixin(StoreBase):
    def list_folder(self, folder: str = "/") -> FolderListing:
        """The direct subfolders and the notebooks of `folder` (which need not exist: then empty)."""
        folder = normalize_folder(folder)
        with self._read() as s:
            subs = {c for p in _all_paths(s, folder) if (c := child_of(p, folder))}
            notebooks = s.scalars(
                select(Notebook).where(Notebook.folder == folder).order_by(Notebook.name, Notebook.id)
            )
            return FolderListing(path=folder, folders=sorted(subs), notebooks=[info(nb) for nb in notebooks])

    def folder_exists(self, folder: str) -> bool:
        folder = normalize_folder(folder)
        if folder == "/":
            return True
        with self._read() as s:
            return bool(_all_paths(s, folder))

    def create_folder(self, path: str, owner_id: int | None = None) -> str:
        path = normalize_folder(path)
        if path == "/":
            raise Exists("the root folder exists already")
        with self._write() as s:
            if s.get(Folder, path) is not None or _all_paths(s, path):
                raise Exists(f"folder {path} exists already")
            s.add(Folder(path=path, owner_id=owner_id, created_at=utcnow()))
        return path

    def rename_folder(self, path: str, new_path: str) -> str:
        """Rename or move a folder with everything under it (notebooks, subfolders, folder shares)."""
        old, new = normalize_folder(path), normalize_folder(new_path)
        if old == "/" or new == "/":
            raise Invalid("the root folder cannot be renamed or replaced")
        if old == new:
            return new
        if is_under(new, old):
            raise Invalid(f"cannot move {old} into itself ({new})")
        with self._write() as s:
            if not _all_paths(s, old):
                raise NotFound(f"no folder {old}")
            if _all_paths(s, new):
                raise Exists(f"folder {new} exists already")

            def moved(p: str) -> str:
                return new + p[len(old):]

            for nb in s.scalars(select(Notebook).where(below(Notebook.folder, old))):
                nb.folder = moved(nb.folder)
            for f in s.scalars(select(Folder).where(below(Folder.path, old))).all():
                # A primary key change: replace the row rather than update the key in place.
                owner, created = f.owner_id, f.created_at
                s.delete(f)
                s.flush()
                s.add(Folder(path=moved(f.path), owner_id=owner, created_at=created))
            for sh in s.scalars(select(Share).where(below(Share.folder_path, old))):
                sh.folder_path = moved(sh.folder_path or old)
        return new

    def delete_folder(self, path: str, recursive: bool = False) -> int:
        """Delete a folder; one holding notebooks needs recursive=True. Returns notebooks deleted."""
        path = normalize_folder(path)
        if path == "/":
            raise Invalid("the root folder cannot be deleted")
        with self._write() as s:
            if not _all_paths(s, path):
                raise NotFound(f"no folder {path}")
            ids = list(s.scalars(select(Notebook.id).where(below(Notebook.folder, path))))
            if ids and not recursive:
                raise Exists(f"folder {path} is not empty ({len(ids)} notebooks); delete them first")
            if ids:
                s.execute(delete(Notebook).where(Notebook.id.in_(ids)))
            s.execute(delete(Folder).where(below(Folder.path, path)))
            s.execute(delete(Share).where(below(Share.folder_path, path)))
            return len(ids)
