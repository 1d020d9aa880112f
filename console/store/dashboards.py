"""Dashboards: a notebook's tiles, each the latest result or chart of one of its cells, in the
order and at the size the editor arranged them (issue 34 item 5).

Who may do what is the server's (console/server/api/dashboards.py): the store keeps one row per
notebook and its shape. A tile names its cell by id, not by a foreign key: a tile stays through
every edit of the notebook, and a deleted cell's tile stays too (the page says the cell is gone,
and a restored revision brings it back). What a tile shows is never stored here: it is the cell's
latest stored run, read when the dashboard is drawn, so a Run all or a job run refreshes it.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from console.store._rows import valid_cell_id
from console.store.db import StoreBase
from console.store.errors import Conflict, Invalid, NotFound
from console.store.models import Cell, Dashboard, Notebook, utcnow

TILE_KINDS = ("result", "chart")
MAX_TILES = 48
MAX_WIDTH = 4   # columns of the dashboard's grid
MAX_HEIGHT = 3  # rows of a tile: small, medium, tall
DEFAULT_WIDTH = 2
DEFAULT_HEIGHT = 2


@dataclass(frozen=True)
class Tile:
    cell_id: str
    kind: str  # result | chart
    width: int = DEFAULT_WIDTH
    height: int = DEFAULT_HEIGHT

    def plain(self) -> dict[str, object]:
        return {"cell_id": self.cell_id, "kind": self.kind, "width": self.width, "height": self.height}


@dataclass(frozen=True)
class DashboardRecord:
    notebook_id: str
    tiles: list[Tile]
    revision: int  # 0: nothing was ever pinned
    updated_at: datetime | None
    updated_by: int | None


def check_tile(tile: Tile, where: str = "tile") -> Tile:
    if not valid_cell_id(tile.cell_id):
        raise Invalid(f"{where}.cell_id is not a cell id")
    if tile.kind not in TILE_KINDS:
        raise Invalid(f"{where}.kind must be one of {', '.join(TILE_KINDS)}")
    if not (isinstance(tile.width, int) and 1 <= tile.width <= MAX_WIDTH):
        raise Invalid(f"{where}.width must be 1 to {MAX_WIDTH}")
    if not (isinstance(tile.height, int) and 1 <= tile.height <= MAX_HEIGHT):
        raise Invalid(f"{where}.height must be 1 to {MAX_HEIGHT}")
    return tile


def _tiles(raw: Iterable[dict[str, Any]] | None) -> list[Tile]:
    out = []
    for t in raw or []:
        try:  # rows are written only through check_tile; a hand-edited one is skipped, not a 500
            out.append(check_tile(Tile(str(t["cell_id"]), str(t["kind"]), t["width"], t["height"])))
        except (KeyError, TypeError, Invalid):
            continue
    return out


def _record(notebook_id: str, row: Dashboard | None) -> DashboardRecord:
    if row is None:
        return DashboardRecord(notebook_id, [], 0, None, None)
    return DashboardRecord(notebook_id, _tiles(row.tiles), row.revision, row.updated_at, row.updated_by)


def _locked(s: Session, notebook_id: str) -> Dashboard | None:
    """The notebook's dashboard row (None: none yet), with the notebook's row locked, so two
    writers of one dashboard take turns on PostgreSQL too (SQLite's writes already do)."""
    if s.get(Notebook, notebook_id, with_for_update=True) is None:
        raise NotFound(f"no notebook {notebook_id!r}")
    return s.get(Dashboard, notebook_id, with_for_update=True)


def _cells(s: Session, notebook_id: str) -> set[str]:
    return set(s.scalars(select(Cell.id).where(Cell.notebook_id == notebook_id)))


def _save(s: Session, notebook_id: str, row: Dashboard | None, tiles: list[Tile], by: int | None) -> DashboardRecord:
    plain = [t.plain() for t in tiles]
    if row is None:
        row = Dashboard(notebook_id=notebook_id, tiles=plain, revision=1, updated_at=utcnow(), updated_by=by)
        s.add(row)
    else:
        row.tiles, row.revision, row.updated_at, row.updated_by = plain, row.revision + 1, utcnow(), by
    s.flush()
    return _record(notebook_id, row)


class DashboardsMixin(StoreBase):
    def get_dashboard(self, notebook_id: str) -> DashboardRecord:
        """The notebook's dashboard; one with no tiles (revision 0) when nothing was pinned yet."""
        with self._read() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            return _record(notebook_id, s.get(Dashboard, notebook_id))

    def set_dashboard(self, notebook_id: str, tiles: list[Tile], by: int | None = None, *,
                      base_revision: int | None = None) -> DashboardRecord:
        """Replace the tiles (their order is the page's). Each names a cell the notebook has, or is a
        tile the dashboard has already (a deleted cell's tile may stay, move or be resized); a cell is
        pinned at most once per kind. With base_revision, Conflict when the dashboard changed since."""
        if len(tiles) > MAX_TILES:
            raise Invalid(f"a dashboard holds at most {MAX_TILES} tiles")
        seen: set[tuple[str, str]] = set()
        for i, tile in enumerate(tiles):
            check_tile(tile, f"tiles[{i}]")
            if (tile.cell_id, tile.kind) in seen:
                raise Invalid(f"tiles[{i}]: the cell's {tile.kind} is pinned twice")
            seen.add((tile.cell_id, tile.kind))
        with self._write() as s:
            row = _locked(s, notebook_id)
            now = row.revision if row is not None else 0
            if base_revision is not None and base_revision != now:
                raise Conflict(now, f"the dashboard changed meanwhile: it is now at revision {now}")
            cells = _cells(s, notebook_id)
            had = {(t.cell_id, t.kind) for t in _tiles(row.tiles if row else None)}
            for i, tile in enumerate(tiles):
                if tile.cell_id not in cells and (tile.cell_id, tile.kind) not in had:
                    raise NotFound(f"tiles[{i}]: no cell {tile.cell_id!r} in this notebook")
            return _save(s, notebook_id, row, list(tiles), by)

    def pin_tile(self, notebook_id: str, tile: Tile, by: int | None = None) -> tuple[DashboardRecord, bool]:
        """Add a tile at the end; (the dashboard, False) when that cell's result or chart is pinned already."""
        check_tile(tile)
        with self._write() as s:
            row = _locked(s, notebook_id)
            if s.get(Cell, (notebook_id, tile.cell_id)) is None:
                raise NotFound(f"no cell {tile.cell_id!r} in this notebook")
            tiles = _tiles(row.tiles if row else None)
            if any((t.cell_id, t.kind) == (tile.cell_id, tile.kind) for t in tiles):
                return _record(notebook_id, row), False
            if len(tiles) >= MAX_TILES:
                raise Invalid(f"a dashboard holds at most {MAX_TILES} tiles")
            return _save(s, notebook_id, row, [*tiles, tile], by), True

    def unpin_tile(self, notebook_id: str, cell_id: str, kind: str, by: int | None = None) -> DashboardRecord:
        """Take a tile off; NotFound when the dashboard has no such tile."""
        with self._write() as s:
            row = _locked(s, notebook_id)
            tiles = _tiles(row.tiles if row else None)
            kept = [t for t in tiles if (t.cell_id, t.kind) != (cell_id, kind)]
            if len(kept) == len(tiles):
                raise NotFound(f"no {kind} tile of cell {cell_id!r} on this dashboard")
            return _save(s, notebook_id, row, kept, by)
