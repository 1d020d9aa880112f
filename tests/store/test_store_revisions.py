"""Revisions: snapshots per save, readable, and restorable as a new revision."""
from __future__ import annotations

import pytest

from console.store import Conflict, NotFound, Store


def test_restore_makes_a_new_revision_with_old_content(store: Store, user) -> None:
    nb = store.create_notebook("v1", cells=[{"kind": "mlsql", "source": "select 1 as a;"}])
    old_id = nb.cells[0].id
    store.update_notebook(nb.id, 1, name="v2", cells=[{"kind": "python", "source": "print(2)"}])
    store.add_cell(nb.id, 2, source="x")
    restored = store.restore_revision(nb.id, 1, author_id=user.id)
    assert restored.revision == 4 and restored.name == "v1"
    assert [(c.id, c.kind, c.source) for c in restored.cells] == [(old_id, "mlsql", "select 1 as a;")]
    revs = store.list_revisions(nb.id)
    assert [r.number for r in revs] == [4, 3, 2, 1]
    assert revs[0].author_id == user.id
    # History is kept: revision 2 still reads as it was.
    assert store.get_revision(nb.id, 2).snapshot["name"] == "v2"


def test_restore_checks_base_revision(store: Store) -> None:
    nb = store.create_notebook("n", cells=[])
    store.add_cell(nb.id, 1, source="x")
    with pytest.raises(Conflict):
        store.restore_revision(nb.id, 1, base_revision=1)
    assert store.get_notebook(nb.id).revision == 2
    with pytest.raises(NotFound):
        store.restore_revision(nb.id, 9)
    with pytest.raises(NotFound):
        store.get_revision(nb.id, 9)
    with pytest.raises(NotFound):
        store.list_revisions("nope")
