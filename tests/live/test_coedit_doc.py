"""The co-editing documents against a real store, without sockets: how store writes and
unstored document changes meet (console/server/live/coedit.py)."""
from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pycrdt import Array, Doc, Map, Text

from console.server.live.coedit import CoEdit
from console.server.live.coedit_doc import apply_store_changes, read_cells, replace_text
from console.store import Store


def _store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'store.db'}")


def _coedit(store: Store) -> tuple[CoEdit, list[dict[str, Any]]]:
    """A co-editing hub over `store` whose saver waits for a flush; the events it sends the room."""
    events: list[dict[str, Any]] = []
    return CoEdit(store, lambda ev, _nb, _sid: events.append(ev), lambda _nb: 1, save_seconds=3600), events


def _two_cells(store: Store) -> Any:
    return store.create_notebook("n", cells=[{"kind": "mlsql", "source": "first"},
                                             {"kind": "mlsql", "source": "second"}])


def _peer(coedit: CoEdit, notebook_id: str) -> tuple[Doc, Array, str]:  # type: ignore[type-arg]
    ack = coedit.sync(notebook_id, "", "", None)
    doc: Doc = Doc()
    doc.apply_update(base64.b64decode(ack["update"]))
    return doc, doc.get("cells", type=Array), ack["epoch"]


def _edit(coedit: CoEdit, notebook_id: str, doc: Doc, epoch: str, change: Callable[[], None]) -> None:
    """Make `change` in the peer's document and send it as the page does (one doc_update)."""
    sent: list[bytes] = []
    sub = doc.observe(lambda e: sent.append(e.update))
    change()
    doc.unobserve(sub)
    coedit.update(notebook_id, base64.b64encode(sent[0]).decode(), epoch, None, "sid-a")


def test_unstored_keystrokes_survive_a_rest_edit_of_another_cell(tmp_path: Path) -> None:
    store = _store(tmp_path)
    nb = _two_cells(store)
    coedit, events = _coedit(store)
    try:
        doc, cells, epoch = _peer(coedit, nb.id)
        _edit(coedit, nb.id, doc, epoch, lambda: cells[0]["source"].insert(5, "!"))
        # Not stored yet; a REST write lands on the stored revision meanwhile.
        assert [c.source for c in store.get_notebook(nb.id).cells] == ["first", "second"]
        store.edit_cell(nb.id, nb.cells[1].id, nb.revision, source="second over REST")
        coedit.store_changed(nb.id)
        changed = [e for e in events if e["type"] == "doc_changed"]
        assert len(changed) == 2  # the keystroke relayed, then the REST edit folded in
        doc.apply_update(base64.b64decode(changed[-1]["update"]))
        assert [str(c["source"]) for c in cells] == ["first!", "second over REST"]
        coedit.flush(nb.id)
        assert [c.source for c in store.get_notebook(nb.id).cells] == ["first!", "second over REST"]
        saved = [e for e in events if e["type"] == "doc_saved"]
        assert saved[-1]["revision"] == store.get_notebook(nb.id).revision
        # The REST edit made a history row; the live save made none (history settles its own).
        assert len(store.list_revisions(nb.id)) == 2
    finally:
        coedit.stop()


def test_store_changes_fold_in_by_cell() -> None:
    doc: Doc = Doc()
    cells: Array = doc.get("cells", type=Array)  # type: ignore[type-arg]
    saved = [("a", "mlsql", "x"), ("b", "python", "y"), ("c", "mlsql", "z")]
    with doc.transaction():
        apply_store_changes(cells, [], saved)
        # The document's own unstored change: a new cell after a, and a keystroke in c.
        cells.insert(1, Map({"id": "n", "kind": "markdown", "source": Text("new")}))
    replace_text(cells[3]["source"], "z", "zz")
    with doc.transaction():
        # The store: b deleted, c moved first with a new kind, d added at the end, a edited.
        apply_store_changes(cells, saved, [("c", "python", "z"), ("a", "mlsql", "x2"), ("d", "mlsql", "d")])
    # n keeps the cell before it in the document (d came in right after a, before n).
    assert read_cells(cells) == [
        ("c", "python", "zz"), ("a", "mlsql", "x2"), ("d", "mlsql", "d"), ("n", "markdown", "new")]


def test_replace_text_counts_characters_beyond_ascii() -> None:
    doc: Doc = Doc()
    text = doc.get("t", type=Text)
    text += "ä😀b"
    replace_text(text, "ä😀b", "ä😀Xb")
    assert str(text) == "ä😀Xb"
    replace_text(text, "ä😀Xb", "😀")
    assert str(text) == "😀"


def test_doc_saved_carries_the_stored_deletions(tmp_path: Path) -> None:
    """A deletion leaves the state vector as it was: pages learn it is stored from `deleted`."""
    store = _store(tmp_path)
    nb = _two_cells(store)
    coedit, events = _coedit(store)
    try:
        doc, cells, epoch = _peer(coedit, nb.id)
        before: Doc = Doc()
        before.apply_update(doc.get_update())
        _edit(coedit, nb.id, doc, epoch, lambda: cells.__delitem__(1))
        coedit.flush(nb.id)
        saved = [e for e in events if e["type"] == "doc_saved"][-1]
        assert [c.source for c in store.get_notebook(nb.id).cells] == ["first"]
        assert base64.b64decode(saved["state_vector"]) == before.get_state()  # unchanged by a deletion
        before.apply_update(base64.b64decode(saved["deleted"]))  # the delete set alone deletes it
        assert [str(c["source"]) for c in before.get("cells", type=Array)] == ["first"]
    finally:
        coedit.stop()


def _clocks(state_vector: str) -> dict[int, int]:
    """A Yjs state vector (base64) as {client: clock}: a count, then (client, clock) pairs, each a
    variable-length unsigned integer."""
    data, at = base64.b64decode(state_vector), 0

    def varuint() -> int:
        nonlocal at
        value, shift = 0, 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    return {varuint(): varuint() for _ in range(varuint())}


def test_a_change_that_leaves_the_cells_as_stored_is_told_stored(tmp_path: Path) -> None:
    """A page's change that read_cells does not see (the same kind set again, a key it ignores) makes
    no new revision; the page must still be told its change is stored, or it says "editing…" until
    its next edit (a CI run's page stayed so for 20 s)."""
    store = _store(tmp_path)
    nb = _two_cells(store)
    coedit, events = _coedit(store)
    try:
        doc, cells, epoch = _peer(coedit, nb.id)
        _edit(coedit, nb.id, doc, epoch, lambda: cells[0].__setitem__("kind", "mlsql"))
        coedit.flush(nb.id)
        assert store.get_notebook(nb.id).revision == nb.revision  # nothing to store
        (saved,) = [e for e in events if e["type"] == "doc_saved"]
        assert saved["revision"] == nb.revision
        assert _clocks(saved["state_vector"]) == _clocks(base64.b64encode(doc.get_state()).decode())
    finally:
        coedit.stop()


def test_a_sync_answer_says_what_the_store_holds(tmp_path: Path) -> None:
    """A page that missed a doc_saved (its socket was reconnecting) learns from its next sync what
    is stored; a change not yet stored is not in it, and a REST write folded in meanwhile tells
    the new revision without claiming the unstored change."""
    store = _store(tmp_path)
    nb = _two_cells(store)
    coedit, events = _coedit(store)
    try:
        doc, cells, epoch = _peer(coedit, nb.id)
        loaded = coedit.sync(nb.id, "", "", None)["saved"]
        _edit(coedit, nb.id, doc, epoch, lambda: cells[0]["source"].insert(5, "!"))
        assert coedit.sync(nb.id, "", "", None)["saved"] == loaded  # typed, not stored
        store.edit_cell(nb.id, nb.cells[1].id, nb.revision, source="second over REST")
        coedit.store_changed(nb.id)
        told = [e for e in events if e["type"] == "doc_saved"][-1]
        assert told["revision"] == nb.revision + 1
        me = doc.client_id  # the page's own client: its clock counts what it typed
        typed = _clocks(base64.b64encode(doc.get_state()).decode())[me]
        assert _clocks(told["state_vector"]).get(me, 0) < typed, "the typing is not stored yet"
        coedit.flush(nb.id)
        saved = coedit.sync(nb.id, "", "", None)["saved"]
        assert _clocks(saved["state_vector"]).get(me, 0) == typed
        last = [e for e in events if e["type"] == "doc_saved"][-1]
        assert (last["state_vector"], last["deleted"]) == (saved["state_vector"], saved["deleted"])
    finally:
        coedit.stop()


class _WriteBetween(Store):
    """A real store where a REST write to the second cell lands right after the co-editing saver
    reads the notebook, as another request can."""

    armed = 0

    def get_notebook(self, notebook_id: str, *args: Any, **kwargs: Any) -> Any:
        rec = super().get_notebook(notebook_id, *args, **kwargs)
        if self.armed:
            self.armed -= 1
            self.edit_cell(notebook_id, rec.cells[1].id, rec.revision, source=f"REST {self.armed}")
        return rec


def test_a_flush_that_meets_a_rest_write_folds_it_in_and_stores(tmp_path: Path) -> None:
    store = _WriteBetween(f"sqlite:///{tmp_path / 'store.db'}")
    nb = _two_cells(store)
    coedit, events = _coedit(store)
    try:
        doc, cells, epoch = _peer(coedit, nb.id)
        _edit(coedit, nb.id, doc, epoch, lambda: cells[0]["source"].insert(5, "!"))
        store.armed = 2  # the first two rounds each meet a write: the third stores
        coedit.flush(nb.id)  # what a run does before it reads the stored source
        assert [c.source for c in store.get_notebook(nb.id).cells] == ["first!", "REST 0"]
    finally:
        coedit.stop()
