"""Notebooks in the store: create/read, full replace with base_revision, rename, move, duplicate, delete."""
from __future__ import annotations

import threading

import pytest

from console.store import Conflict, Invalid, NotFound, Store

CELLS = [
    {"kind": "mlsql", "source": "load parquet.`/tmp/mnist` as mnist;"},
    {"kind": "python", "source": "--%python\nprint(1)"},
    {"kind": "markdown", "source": "# notes"},
]


def test_create_and_get(store: Store, user) -> None:
    nb = store.create_notebook("MNIST", "/team/a/", owner_id=user.id, cells=CELLS)
    assert nb.revision == 1 and nb.folder == "/team/a" and nb.owner_id == user.id
    got = store.get_notebook(nb.id)
    assert [(c.kind, c.source, c.position) for c in got.cells] == [
        (c["kind"], c["source"], i) for i, c in enumerate(CELLS)
    ]
    assert len({c.id for c in got.cells}) == 3
    assert got.created_at.tzinfo is not None
    assert [r.number for r in store.list_revisions(nb.id)] == [1]


def test_stale_update_conflicts_and_writes_nothing(store: Store, user) -> None:
    nb = store.create_notebook("n", cells=CELLS)
    first = store.update_notebook(nb.id, 1, cells=[{"kind": "mlsql", "source": "select 1 as a;"}], author_id=user.id)
    assert first.revision == 2
    with pytest.raises(Conflict) as info:
        store.update_notebook(nb.id, 1, name="mine", cells=[{"kind": "mlsql", "source": "select 2 as b;"}])
    assert info.value.current_revision == 2
    now = store.get_notebook(nb.id)
    assert now.revision == 2 and now.name == "n"
    assert [c.source for c in now.cells] == ["select 1 as a;"]
    assert [r.number for r in store.list_revisions(nb.id)] == [2, 1]


def test_update_keeps_given_cell_ids(store: Store) -> None:
    nb = store.create_notebook("n", cells=CELLS)
    ids = [c.id for c in nb.cells]
    new = store.update_notebook(nb.id, 1, cells=[
        {"id": ids[2], "kind": "markdown", "source": "# moved first"},
        {"kind": "mlsql", "source": "select 1 as x;"},
    ])
    assert new.cells[0].id == ids[2] and new.cells[1].id not in ids
    assert [c.position for c in new.cells] == [0, 1]


def test_concurrent_writers_one_wins(store: Store) -> None:
    nb = store.create_notebook("n", cells=CELLS)
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def write(i: int) -> None:
        barrier.wait()
        try:
            store.update_notebook(nb.id, 1, cells=[{"kind": "mlsql", "source": f"select {i} as x;"}])
            outcomes.append("ok")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict"] * 3 + ["ok"]
    assert store.get_notebook(nb.id).revision == 2


def test_rename_move_duplicate_delete(store: Store, user) -> None:
    nb = store.create_notebook("n", "/a", cells=CELLS)
    renamed = store.rename_notebook(nb.id, "  better  ")
    assert renamed.name == "better" and renamed.revision == 2
    moved = store.move_notebook(nb.id, "/b/c")
    assert moved.folder == "/b/c" and moved.revision == 2
    copy = store.duplicate_notebook(nb.id, owner_id=user.id)
    assert copy.id != nb.id and copy.name == "better (copy)" and copy.revision == 1
    assert [c.source for c in copy.cells] == [c["source"] for c in CELLS]
    run = store.create_run(nb.id, nb.cells[0].id, "x")
    store.delete_notebook(nb.id)
    with pytest.raises(NotFound):
        store.get_notebook(nb.id)
    with pytest.raises(NotFound):
        store.get_run(run.id)
    with pytest.raises(NotFound):
        store.delete_notebook(nb.id)
    assert store.get_notebook(copy.id).name == "better (copy)"


@pytest.mark.parametrize("cells, message", [
    ([{"kind": "scala", "source": ""}], "kind"),
    ([{"kind": "mlsql", "source": 3}], "source"),
    ([{"id": "a b", "kind": "mlsql", "source": ""}], "id"),
    ([{"id": "x", "kind": "mlsql"}, {"id": "x", "kind": "mlsql"}], "twice"),
    ("not a list", "list"),
])
def test_bad_cells_are_refused(store: Store, cells, message: str) -> None:
    with pytest.raises(Invalid, match=message):
        store.create_notebook("n", cells=cells)
    assert store.find_notebooks(name="n") == []


@pytest.mark.parametrize("folder", ["/a/../b", "/a/./b", "/a\x00b"])
def test_bad_folders_are_refused(store: Store, folder: str) -> None:
    with pytest.raises(Invalid):
        store.create_notebook("n", folder)


def test_unknown_notebook(store: Store) -> None:
    with pytest.raises(NotFound):
        store.get_notebook("nope")
    with pytest.raises(NotFound):
        store.update_notebook("nope", 1, cells=[])
