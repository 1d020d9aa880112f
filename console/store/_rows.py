"""Helpers the repository modules share: row -> record conversion, cell checks, saving a revision."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from console.store.db import new_id
from console.store.errors import Conflict, Invalid, NotFound
from console.store.models import CELL_KINDS, Cell, Notebook, Revision, utcnow
from console.store.records import CellRecord, NotebookInfo, NotebookRecord
from console.store.views import check_view

_CELL_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
MAX_CELLS = 10_000


def valid_cell_id(cell_id: object) -> bool:
    """Whether a cell id can be kept as given: 1-32 letters, digits, '_' or '-'."""
    return isinstance(cell_id, str) and bool(_CELL_ID.match(cell_id))


def info(nb: Notebook) -> NotebookInfo:
    return NotebookInfo(
        id=nb.id, name=nb.name, folder=nb.folder, owner_id=nb.owner_id, revision=nb.revision,
        created_at=nb.created_at, updated_at=nb.updated_at,
    )


def load_cells(session: Session, notebook_id: str) -> list[CellRecord]:
    rows = session.scalars(
        select(Cell).where(Cell.notebook_id == notebook_id).order_by(Cell.position)
    )
    return [CellRecord(id=c.id, kind=c.kind, source=c.source, position=c.position, view=c.view) for c in rows]


def record(session: Session, nb: Notebook) -> NotebookRecord:
    return NotebookRecord(**info(nb).__dict__, cells=load_cells(session, nb.id))


def lock_notebook(session: Session, notebook_id: str, base_revision: int | None = None) -> Notebook:
    """The notebook row, locked for this transaction on databases that lock rows (PostgreSQL).

    SQLite's write transactions already hold the database's single write lock. A stale
    base_revision raises Conflict here, before a missing cell could hide the real cause.
    """
    if not isinstance(notebook_id, str):
        raise NotFound(f"no notebook {notebook_id!r}")
    nb = session.scalars(
        select(Notebook).where(Notebook.id == notebook_id).with_for_update()
    ).one_or_none()
    if nb is None:
        raise NotFound(f"no notebook {notebook_id!r}")
    if base_revision is not None and base_revision != nb.revision:
        raise Conflict(nb.revision)
    return nb


def check_kind(kind: object) -> str:
    if kind not in CELL_KINDS:
        raise Invalid(f"cell kind must be one of {', '.join(CELL_KINDS)}, not {kind!r}")
    return str(kind)


def check_source(source: object) -> str:
    if not isinstance(source, str):
        raise Invalid("cell source must be a string")
    return source


def clean_cells(cells: Iterable[Any], keep_ids: bool = True) -> list[dict[str, Any]]:
    """Validate cells given as mappings {kind, source, id?, view?}; give new ids where none (or keep_ids=False)."""
    if isinstance(cells, (str, bytes, Mapping)) or not isinstance(cells, Iterable):
        raise Invalid("cells must be a list")
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, cell in enumerate(cells):
        if not isinstance(cell, Mapping):
            raise Invalid(f"cell {i + 1} must be an object")
        cid = cell.get("id") if keep_ids else None
        if cid is None:
            cid = new_id()
            while cid in seen:  # pragma: no cover - 62 random bits
                cid = new_id()
        elif not isinstance(cid, str) or not _CELL_ID.match(cid):
            raise Invalid(f"cell {i + 1}: id must be 1-32 letters, digits, '_' or '-'")
        if cid in seen:
            raise Invalid(f"cell {i + 1}: id {cid!r} appears twice")
        seen.add(cid)
        clean: dict[str, Any] = {
            "id": cid,
            "kind": check_kind(cell.get("kind", "mlsql")),
            "source": check_source(cell.get("source", "")),
        }
        if "view" in cell:  # absent: a cell with this id keeps its view (write_cells); null clears it
            clean["view"] = check_view(cell["view"], f"cell {i + 1}: view")
        out.append(clean)
    if len(out) > MAX_CELLS:
        raise Invalid(f"a notebook holds at most {MAX_CELLS} cells")
    return out


def as_dicts(cells: Iterable[CellRecord]) -> list[dict[str, Any]]:
    """Cells as {id, kind, source, view}: snapshots keep the view, so a restore brings it back."""
    return [{"id": c.id, "kind": c.kind, "source": c.source, "view": c.view} for c in cells]


def save_revision(
    session: Session,
    nb: Notebook,
    base_revision: int | None,
    author_id: int | None,
    name: str,
    cells: list[dict[str, Any]] | None,
    snapshot: bool = True,
) -> NotebookRecord:
    """Write a new revision of a locked notebook: name, cells (None = unchanged) and a snapshot.

    A stale base_revision raises Conflict before anything is written; None skips the check
    (used by operations that do not depend on what the client saw, such as a restore by number).
    snapshot=False still counts the revision (so a stale REST edit gets its 409) but leaves no
    history row: live co-editing saves every few seconds, and history keeps only settled states.
    """
    if base_revision is not None and base_revision != nb.revision:
        raise Conflict(nb.revision)
    if cells is None:
        cells = as_dicts(load_cells(session, nb.id))
    else:
        write_cells(session, nb.id, cells)
        cells = as_dicts(load_cells(session, nb.id))  # as stored: views kept for cells given without one
    nb.name = name
    nb.revision += 1
    nb.updated_at = utcnow()
    if snapshot:
        add_snapshot(session, nb, author_id, cells)
    else:
        note_author(nb, author_id)
    session.flush()
    return record(session, nb)


def note_author(nb: Notebook, author_id: int | None) -> None:
    """Remember who saved without a history row, so the snapshot that settles it names them."""
    if author_id is not None and author_id not in (nb.pending_authors or []):
        nb.pending_authors = [*(nb.pending_authors or []), author_id]  # a new list: JSON columns see assignments only


def write_cells(session: Session, notebook_id: str, cells: list[dict[str, Any]]) -> None:
    # A cell given without a view keeps the one it has: a client that edits only sources (a
    # co-editing save, a PUT of sources) must not drop the charts.
    views = {} if all("view" in c for c in cells) else {
        cid: view for cid, view in session.execute(select(Cell.id, Cell.view).where(Cell.notebook_id == notebook_id))}
    # Delete-then-insert keeps positions dense and sidesteps key clashes while cells reorder.
    session.execute(delete(Cell).where(Cell.notebook_id == notebook_id))
    if cells:
        session.execute(insert(Cell), [
            {"notebook_id": notebook_id, "id": c["id"], "position": i, "kind": c["kind"], "source": c["source"],
             "view": c["view"] if "view" in c else views.get(c["id"])}
            for i, c in enumerate(cells)
        ])


def add_snapshot(session: Session, nb: Notebook, author_id: int | None, cells: list[dict[str, Any]],
                 label: str | None = None) -> Revision:
    """The history row of the notebook's current revision. Its authors are everyone who saved
    since the last row (pending_authors) and `author_id`; the pending list starts again."""
    authors = list(nb.pending_authors or [])
    if author_id is not None and author_id not in authors:
        authors.append(author_id)
    last = author_id if author_id is not None else (authors[-1] if authors else None)
    row = Revision(
        notebook_id=nb.id, number=nb.revision, author_id=last,
        snapshot={"name": nb.name, "cells": [dict(c) for c in cells], "authors": authors, "label": label,
                  "environment": nb.environment},
    )
    session.add(row)
    nb.pending_authors = None
    return row
