"""Cells: add at a position, edit source or kind, move, delete; each edit is a new revision."""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select

from console.store._rows import as_dicts, check_kind, check_source, load_cells, lock_notebook, save_revision, MAX_CELLS
from console.store.db import StoreBase, new_id
from console.store.errors import Invalid, NotFound
from console.store.models import Cell
from console.store.records import CellRecord, NotebookRecord


def _index(cells: list[dict[str, str]], cell_id: str) -> int:
    for i, c in enumerate(cells):
        if c["id"] == cell_id:
            return i
    raise NotFound(f"no cell {cell_id!r} in this notebook")


def _position(position: object, size: int) -> int:
    """A target index in 0..size; negative counts from the end like Python's list.insert."""
    if isinstance(position, bool) or not isinstance(position, int):
        raise Invalid("position must be an integer")
    if position < 0:
        position = max(0, size + 1 + position)
    return min(position, size)


_ID_CHUNK = 500  # notebook ids per IN (...): well under any database's limit on bound parameters


class CellsMixin(StoreBase):
    def cells_containing(self, notebook_ids: Iterable[str], text: str) -> list[tuple[str, CellRecord]]:
        """(notebook id, cell) of the notebooks' cells that may contain `text`, ignoring case, in
        notebook and cell order. A superset when `text` is not ASCII (SQLite's lower() folds ASCII
        only, so such text is not filtered here): the caller checks each cell itself."""
        ids = sorted(set(notebook_ids))
        out: list[tuple[str, CellRecord]] = []
        with self._read() as s:
            for i in range(0, len(ids), _ID_CHUNK):
                q = select(Cell).where(Cell.notebook_id.in_(ids[i:i + _ID_CHUNK]))
                if text.isascii():
                    q = q.where(func.lower(Cell.source).contains(text.lower(), autoescape=True))
                for c in s.scalars(q.order_by(Cell.notebook_id, Cell.position)):
                    out.append((c.notebook_id, CellRecord(id=c.id, kind=c.kind, source=c.source, position=c.position)))
        return out

    def get_cell(self, notebook_id: str, cell_id: str) -> CellRecord:
        with self._read() as s:
            c = s.get(Cell, (notebook_id, cell_id))
            if c is None:
                raise NotFound(f"no cell {cell_id!r} in notebook {notebook_id!r}")
            return CellRecord(id=c.id, kind=c.kind, source=c.source, position=c.position)

    def add_cell(
        self,
        notebook_id: str,
        base_revision: int | None,
        kind: str = "mlsql",
        source: str = "",
        position: int | None = None,
        author_id: int | None = None,
    ) -> tuple[NotebookRecord, CellRecord]:
        """Insert a new cell at `position` (default: at the end); returns the notebook and the cell."""
        kind = check_kind(kind)
        source = check_source(source)
        with self._write() as s:
            nb = lock_notebook(s, notebook_id, base_revision)
            cells = as_dicts(load_cells(s, nb.id))
            if len(cells) >= MAX_CELLS:
                raise Invalid(f"a notebook holds at most {MAX_CELLS} cells")
            at = len(cells) if position is None else _position(position, len(cells))
            cid = new_id()
            cells.insert(at, {"id": cid, "kind": kind, "source": source})
            rec = save_revision(s, nb, base_revision, author_id, nb.name, cells)
            return rec, rec.cells[at]

    def edit_cell(
        self,
        notebook_id: str,
        cell_id: str,
        base_revision: int | None,
        source: str | None = None,
        kind: str | None = None,
        author_id: int | None = None,
    ) -> NotebookRecord:
        """Change a cell's source and/or kind (a REST write: a history row, like every REST write;
        the page's typing goes through the live document, which leaves none)."""
        if source is None and kind is None:
            raise Invalid("nothing to change: give source and/or kind")
        new_source = check_source(source) if source is not None else None
        new_kind = check_kind(kind) if kind is not None else None
        with self._write() as s:
            nb = lock_notebook(s, notebook_id, base_revision)
            cells = as_dicts(load_cells(s, nb.id))
            cell = cells[_index(cells, cell_id)]
            if new_source is not None:
                cell["source"] = new_source
            if new_kind is not None:
                cell["kind"] = new_kind
            return save_revision(s, nb, base_revision, author_id, nb.name, cells)

    def move_cell(
        self, notebook_id: str, cell_id: str, position: int, base_revision: int | None,
        author_id: int | None = None,
    ) -> NotebookRecord:
        """Move a cell so that it ends up at index `position` (clamped to the notebook)."""
        with self._write() as s:
            nb = lock_notebook(s, notebook_id, base_revision)
            cells = as_dicts(load_cells(s, nb.id))
            cell = cells.pop(_index(cells, cell_id))
            cells.insert(_position(position, len(cells)), cell)
            return save_revision(s, nb, base_revision, author_id, nb.name, cells)

    def delete_cell(
        self, notebook_id: str, cell_id: str, base_revision: int | None, author_id: int | None = None
    ) -> NotebookRecord:
        with self._write() as s:
            nb = lock_notebook(s, notebook_id, base_revision)
            cells = as_dicts(load_cells(s, nb.id))
            cells.pop(_index(cells, cell_id))
            return save_revision(s, nb, base_revision, author_id, nb.name, cells)
