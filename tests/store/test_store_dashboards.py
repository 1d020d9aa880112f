"""Dashboards in the store (SQLite and PostgreSQL): pinning, arranging, unpinning, stale writes,
tiles of deleted cells, and a dashboard going with its notebook."""
from __future__ import annotations

import pytest

from console.store import Conflict, Invalid, NotFound, Store, UserRecord
from console.store.dashboards import MAX_TILES, Tile


def _notebook(store: Store, owner: UserRecord) -> tuple[str, list[str]]:
    nb = store.create_notebook("sales", owner_id=owner.id,
                               cells=[{"kind": "mlsql", "source": "select 1 as a as t;"},
                                      {"kind": "mlsql", "source": "select 2 as b as u;"}])
    return nb.id, [c.id for c in nb.cells]


def test_pin_arrange_and_unpin(store: Store, user: UserRecord) -> None:
    nb, (c0, c1) = _notebook(store, user)
    empty = store.get_dashboard(nb)
    assert empty.tiles == [] and empty.revision == 0 and empty.updated_at is None

    d, added = store.pin_tile(nb, Tile(c0, "chart"), user.id)
    assert added and d.revision == 1 and d.tiles == [Tile(c0, "chart", 2, 2)] and d.updated_by == user.id
    d, added = store.pin_tile(nb, Tile(c0, "chart", 4, 3), user.id)  # pinned already: unchanged
    assert not added and d.revision == 1 and d.tiles == [Tile(c0, "chart", 2, 2)]
    d, _ = store.pin_tile(nb, Tile(c0, "result", 1, 1), user.id)  # the same cell's table is another tile
    d, _ = store.pin_tile(nb, Tile(c1, "result"), user.id)
    assert [(t.cell_id, t.kind) for t in d.tiles] == [(c0, "chart"), (c0, "result"), (c1, "result")]

    arranged = [Tile(c1, "result", 4, 1), Tile(c0, "chart", 3, 3)]
    d = store.set_dashboard(nb, arranged, user.id, base_revision=d.revision)
    assert d.tiles == arranged and d.revision == 4
    assert store.get_dashboard(nb) == d

    with pytest.raises(Conflict) as stale:
        store.set_dashboard(nb, [], user.id, base_revision=3)
    assert stale.value.current_revision == 4
    assert store.get_dashboard(nb).tiles == arranged  # nothing was written

    d = store.unpin_tile(nb, c1, "result", user.id)
    assert d.tiles == [Tile(c0, "chart", 3, 3)]
    with pytest.raises(NotFound):
        store.unpin_tile(nb, c1, "result", user.id)


def test_bad_tiles_are_refused(store: Store, user: UserRecord) -> None:
    nb, (c0, _) = _notebook(store, user)
    elsewhere, (other_cell, _) = _notebook(store, user)
    for tile in (Tile(c0, "table"), Tile(c0, "chart", 0, 2), Tile(c0, "chart", 5, 2), Tile(c0, "chart", 2, 4),
                 Tile("../x", "chart"), Tile("", "chart")):
        with pytest.raises(Invalid):
            store.pin_tile(nb, tile, user.id)
        with pytest.raises(Invalid):
            store.set_dashboard(nb, [tile], user.id)
    with pytest.raises(Invalid, match="twice"):
        store.set_dashboard(nb, [Tile(c0, "chart"), Tile(c0, "chart", 1, 1)], user.id)
    with pytest.raises(NotFound):  # another notebook's cell is no cell here
        store.pin_tile(nb, Tile(other_cell, "chart"), user.id)
    with pytest.raises(NotFound):
        store.set_dashboard(nb, [Tile(other_cell, "chart")], user.id)
    with pytest.raises(NotFound):
        store.get_dashboard("nosuchnotebook")
    with pytest.raises(NotFound):
        store.pin_tile("nosuchnotebook", Tile(c0, "chart"), user.id)
    with pytest.raises(Invalid, match=str(MAX_TILES)):
        store.set_dashboard(nb, [Tile(c0, "chart")] * (MAX_TILES + 1), user.id)
    assert store.get_dashboard(nb).revision == 0 and store.get_dashboard(elsewhere).revision == 0


def test_a_deleted_cells_tile_stays_and_the_dashboard_goes_with_its_notebook(store: Store, user: UserRecord) -> None:
    nb, (c0, c1) = _notebook(store, user)
    store.pin_tile(nb, Tile(c0, "chart"), user.id)
    d, _ = store.pin_tile(nb, Tile(c1, "result"), user.id)
    rev = store.get_notebook(nb).revision
    store.delete_cell(nb, c1, base_revision=rev)
    assert [t.cell_id for t in store.get_dashboard(nb).tiles] == [c0, c1]
    # A tile of a deleted cell may still be moved and resized, but a gone cell is not pinned anew.
    d = store.set_dashboard(nb, [Tile(c1, "result", 1, 1), Tile(c0, "chart")], user.id)
    assert d.tiles[0] == Tile(c1, "result", 1, 1)
    with pytest.raises(NotFound):
        store.pin_tile(nb, Tile(c1, "chart"), user.id)
    with pytest.raises(NotFound):
        store.set_dashboard(nb, [Tile(c1, "chart")], user.id)
    store.delete_notebook(nb)
    with pytest.raises(NotFound):
        store.get_dashboard(nb)
