"""Run manifests in the store, on both databases: kept once per run, replaced by a second save,
gone with their run's notebook (issue 32)."""
from __future__ import annotations

import pytest

from console.store import NotFound, Store

ENTRIES = [{"access": "read", "format": "delta", "path": "db.t", "table": "db.t", "version": 3,
            "verified": True, "check": "version 3 is in the lake's log of db.t"},
           {"access": "read", "format": "csv", "path": "lake:x.csv", "size": 12, "mtime": 1.5,
            "digest": "sha256:ab", "verified": False, "check": "recorded as the kernel reported it"}]


def test_a_manifest_is_kept_with_its_run_and_replaced_by_a_second_save(store: Store) -> None:
    nb = store.create_notebook("m", cells=[{"kind": "mlsql", "source": "select 1 as a as t;"}])
    run = store.create_run(nb.id, nb.cells[0].id, "select 1 as a as t;")
    assert store.get_manifest(run.id) is None
    kept = store.save_manifest(run.id, 4, {"day": "friday"}, ENTRIES, dropped=2)
    assert store.get_manifest(run.id) == kept
    assert (kept.revision, kept.params, kept.entries, kept.dropped) == (4, {"day": "friday"}, ENTRIES, 2)
    store.save_manifest(run.id, 5, {}, [])
    again = store.get_manifest(run.id)
    assert again is not None and (again.revision, again.entries) == (5, [])
    (listed,) = [m for m in store.recent_manifests() if m.manifest.run_id == run.id]
    assert listed.notebook_id == nb.id and listed.cell_id == nb.cells[0].id
    with pytest.raises(NotFound):
        store.save_manifest("no-such-run", None, {}, [])
    with pytest.raises(NotFound):
        store.get_manifest("no-such-run")
    store.delete_notebook(nb.id)
    assert [m for m in store.recent_manifests() if m.manifest.run_id == run.id] == []


def test_a_run_ends_with_its_manifest_in_one_write(store: Store) -> None:
    nb = store.create_notebook("m2", cells=[{"kind": "mlsql", "source": "select 1 as a as t;"}])
    run = store.create_run(nb.id, nb.cells[0].id, "select 1 as a as t;")
    store.finish_run(run.id, "done", manifest={"revision": 2, "params": {"d": "x"}, "entries": ENTRIES,
                                               "dropped": 0})
    kept = store.get_manifest(run.id)
    assert kept is not None and (kept.revision, kept.params, kept.entries) == (2, {"d": "x"}, ENTRIES)
    other = store.create_run(nb.id, nb.cells[0].id, "select 1 as a as t;")
    store.finish_run(other.id, "cancelled")  # without one (a run the server never checked)
    assert store.get_manifest(other.id) is None
