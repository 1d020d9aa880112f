"""Notebooks: create, read, full update with base_revision, rename, move, delete, duplicate."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, select

from console.store._rows import (
    add_snapshot, as_dicts, clean_cells, info, load_cells, lock_notebook, record, save_revision, write_cells,
)
from console.store.db import StoreBase, new_id
from console.store.errors import NotFound
from console.store.models import Notebook, utcnow
from console.store.paths import check_name, normalize_folder
from console.store.records import NotebookInfo, NotebookRecord
from console.store.views import check_view


class NotebooksMixin(StoreBase):
    def create_notebook(
        self,
        name: str,
        folder: str = "/",
        owner_id: int | None = None,
        cells: Iterable[Any] | None = None,
        keep_ids: bool = True,
        environment: dict[str, Any] | None = None,
    ) -> NotebookRecord:
        """A new notebook at revision 1 (with its first snapshot); cells are {kind, source, id?};
        environment: its %pip requirements, checked by the caller (console/wire/environment.py)."""
        name = check_name(name)
        folder = normalize_folder(folder)
        clean = clean_cells(cells or [], keep_ids=keep_ids)
        with self._write() as s:
            now = utcnow()
            nb = Notebook(id=new_id(), name=name, folder=folder, owner_id=owner_id, revision=1,
                          created_at=now, updated_at=now,
                          environment=environment if environment and environment.get("requirements") else None)
            s.add(nb)
            s.flush()
            write_cells(s, nb.id, clean)
            add_snapshot(s, nb, owner_id, as_dicts(load_cells(s, nb.id)))
            s.flush()
            return record(s, nb)

    def get_notebook(self, notebook_id: str) -> NotebookRecord:
        with self._read() as s:
            nb = s.get(Notebook, notebook_id) if isinstance(notebook_id, str) else None
            if nb is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            return record(s, nb)

    def get_notebook_info(self, notebook_id: str) -> NotebookInfo:
        with self._read() as s:
            nb = s.get(Notebook, notebook_id) if isinstance(notebook_id, str) else None
            if nb is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            return info(nb)

    def find_notebooks(self, name: str | None = None, owner_id: int | None = None) -> list[NotebookInfo]:
        """Notebooks with exactly this name and/or owner, oldest first."""
        q = select(Notebook).order_by(Notebook.created_at, Notebook.id)
        if name is not None:
            q = q.where(Notebook.name == name)
        if owner_id is not None:
            q = q.where(Notebook.owner_id == owner_id)
        with self._read() as s:
            return [info(nb) for nb in s.scalars(q)]

    def update_notebook(
        self,
        notebook_id: str,
        base_revision: int,
        name: str | None = None,
        cells: Iterable[Any] | None = None,
        author_id: int | None = None,
        snapshot: bool = True,
    ) -> NotebookRecord:
        """Replace name and/or all cells; a stale base_revision raises Conflict and writes nothing.

        Cells that carry the id of an existing cell keep it (and so their last output).
        snapshot=False: a new revision number without a history row (see save_revision).
        """
        new_name = check_name(name) if name is not None else None
        clean = clean_cells(cells) if cells is not None else None
        with self._write() as s:
            nb = lock_notebook(s, notebook_id, base_revision)
            return save_revision(s, nb, base_revision, author_id, new_name or nb.name, clean, snapshot)

    def rename_notebook(
        self, notebook_id: str, name: str, base_revision: int | None = None, author_id: int | None = None
    ) -> NotebookRecord:
        """A new name is a new revision (snapshots hold the name)."""
        name = check_name(name)
        with self._write() as s:
            nb = lock_notebook(s, notebook_id)
            return save_revision(s, nb, base_revision, author_id, name, None)

    def move_notebook(self, notebook_id: str, folder: str) -> NotebookInfo:
        """Move to another folder; not a new revision (snapshots hold content, not place)."""
        folder = normalize_folder(folder)
        with self._write() as s:
            nb = lock_notebook(s, notebook_id)
            nb.folder = folder
            nb.updated_at = utcnow()
            s.flush()
            return info(nb)

    def delete_notebook(self, notebook_id: str) -> None:
        """Delete a notebook with its cells, revisions, runs, outputs, shares and links."""
        with self._write() as s:
            lock_notebook(s, notebook_id)
            # ON DELETE CASCADE removes the dependent rows in the database itself.
            s.execute(delete(Notebook).where(Notebook.id == notebook_id))

    def set_cell_view(
        self, notebook_id: str, cell_id: str, view: Any, base_revision: int | None, author_id: int | None = None,
    ) -> NotebookRecord:
        """Save how a cell's result is shown (console/store/views.py; None: the plain table).

        A new revision like any edit, so a chart survives reload, share, export and restore.
        """
        clean = check_view(view)
        with self._write() as s:
            nb = lock_notebook(s, notebook_id, base_revision)
            cells = as_dicts(load_cells(s, nb.id))
            for cell in cells:
                if cell["id"] == cell_id:
                    cell["view"] = clean
                    break
            else:
                raise NotFound(f"no cell {cell_id!r} in this notebook")
            return save_revision(s, nb, base_revision, author_id, nb.name, cells)

    def duplicate_notebook(
        self,
        notebook_id: str,
        owner_id: int | None = None,
        name: str | None = None,
        folder: str | None = None,
    ) -> NotebookRecord:
        """A copy of the current content (cell ids kept, no runs, fresh history) owned by owner_id."""
        src = self.get_notebook(notebook_id)
        with self._read() as s:  # the copy installs the same packages
            row = s.get(Notebook, notebook_id)
            environment = row.environment if row is not None else None
        return self.create_notebook(
            name if name is not None else f"{src.name} (copy)",
            folder if folder is not None else src.folder,
            owner_id=owner_id,
            cells=as_dicts(src.cells), environment=environment,
        )
