"""Cell edits: each one is a new revision with a snapshot, and each checks base_revision."""
from __future__ import annotations

import pytest

from console.store import Conflict, Invalid, NotFound, Store


def _sources(store: Store, nb_id: str) -> list[str]:
    return [c.source for c in store.get_notebook(nb_id).cells]


def test_add_edit_move_delete(store: Store) -> None:
    nb = store.create_notebook("n", cells=[{"kind": "mlsql", "source": "a"}, {"kind": "mlsql", "source": "b"}])
    nb2, cell = store.add_cell(nb.id, 1, kind="python", source="c", position=1)
    assert nb2.revision == 2 and cell.position == 1 and _sources(store, nb.id) == ["a", "c", "b"]
    nb3, end = store.add_cell(nb.id, 2, source="d")
    assert end.position == 3 and nb3.revision == 3
    nb4 = store.edit_cell(nb.id, cell.id, 3, source="c2", kind="markdown")
    assert nb4.cells[1].source == "c2" and nb4.cells[1].kind == "markdown"
    nb5 = store.move_cell(nb.id, cell.id, 0, 4)
    assert [c.source for c in nb5.cells] == ["c2", "a", "b", "d"]
    assert [c.position for c in nb5.cells] == [0, 1, 2, 3]
    nb6 = store.move_cell(nb.id, cell.id, 99, 5)
    assert [c.source for c in nb6.cells] == ["a", "b", "d", "c2"]
    nb7 = store.delete_cell(nb.id, cell.id, 6)
    assert nb7.revision == 7 and _sources(store, nb.id) == ["a", "b", "d"]
    snap = store.get_revision(nb.id, 5).snapshot
    assert [c["source"] for c in snap["cells"]] == ["c2", "a", "b", "d"]
    assert [r.number for r in store.list_revisions(nb.id)] == [7, 6, 5, 4, 3, 2, 1]


def test_stale_cell_edit_conflicts(store: Store) -> None:
    nb = store.create_notebook("n", cells=[{"kind": "mlsql", "source": "a"}])
    cid = nb.cells[0].id
    store.edit_cell(nb.id, cid, 1, source="theirs")
    with pytest.raises(Conflict) as info:
        store.edit_cell(nb.id, cid, 1, source="mine")
    assert info.value.current_revision == 2
    with pytest.raises(Conflict):
        store.add_cell(nb.id, 1, source="x")
    with pytest.raises(Conflict):
        store.delete_cell(nb.id, cid, 1)
    # A stale edit of a cell someone else deleted reports the conflict, not a missing cell.
    store.delete_cell(nb.id, cid, 2)
    with pytest.raises(Conflict):
        store.edit_cell(nb.id, cid, 2, source="mine")
    assert store.get_notebook(nb.id).revision == 3


def test_cell_errors(store: Store) -> None:
    nb = store.create_notebook("n", cells=[{"kind": "mlsql", "source": "a"}])
    with pytest.raises(NotFound):
        store.edit_cell(nb.id, "nope", 1, source="x")
    with pytest.raises(Invalid):
        store.edit_cell(nb.id, nb.cells[0].id, 1, kind="scala")
    with pytest.raises(Invalid):
        store.edit_cell(nb.id, nb.cells[0].id, 1)
    with pytest.raises(Invalid):
        store.add_cell(nb.id, 1, kind="r")
    assert store.get_notebook(nb.id).revision == 1
    assert store.get_cell(nb.id, nb.cells[0].id).source == "a"
