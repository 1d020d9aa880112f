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
