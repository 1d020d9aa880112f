"""Live co-editing against a real server: pycrdt documents on both ends of real Socket.IO clients.

Each client here is what a page is: it syncs the notebook's shared document (doc_sync), sends
its own changes (doc_update) and applies everyone else's (doc_changed). The server stores the
merged document, folds REST edits into it, and refuses what the policy table refuses.

This module's server runs on a MovableClock (console/clock.py): the saver stores a document, and a
run's settle gives up, when a test moves the clock, and a test waits for the room's doc_saved.
"""
from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pycrdt import Array, Doc, Map, Text

from console.clock import CLOCK_KEY, MovableClock
from console.server.live.coedit import COEDIT_KEY, SETTLE_SECONDS
from console.server.live.coedit_doc import read_cells, source_digest
from tests.support.clients import Viewer, http, join
from tests.support.live_server import LiveServer as Server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    live = Server(str(tmp_path_factory.mktemp("coedit-data")), CLOCK=MovableClock())
    try:
        yield live
    finally:
        live.close()


def _clock(server: Server) -> MovableClock:
    clock: MovableClock = server.app.extensions[CLOCK_KEY]
    return clock


class Peer:
    """A socket client holding its own copy of the notebook's document, as a page does."""

    def __init__(self, v: Viewer, notebook_id: str) -> None:
        self.v, self.nb = v, notebook_id
        join(v, _Nb(notebook_id))
        ack = v.command("doc_sync", notebook_id=notebook_id)
        assert ack["ok"], ack
        self.epoch = ack["epoch"]
        self.doc: Doc = Doc()
        self.cells: Array = self.doc.get("cells", type=Array)  # type: ignore[type-arg]
        self.doc.apply_update(base64.b64decode(ack["update"]))
        self.seen = len(v.events)
        self.outbox: list[bytes] = []
        self.sub = self.doc.observe(lambda e: self.outbox.append(e.update))

    def text(self, i: int = 0) -> str:
        return str(self.cells[i]["source"])

    def send(self) -> dict[str, Any]:
        """Send what changed locally since the last send, as one doc_update per transaction."""
        acks = [self.v.command("doc_update", notebook_id=self.nb, epoch=self.epoch,
                               update=base64.b64encode(u).decode()) for u in self.outbox]
        self.outbox.clear()
        assert all(a["ok"] for a in acks), acks
        return acks[-1] if acks else {"ok": True}

    def receive(self, until: Any, timeout: float = 10.0) -> None:
        """Apply the room's doc_changed events until `until()` holds."""
        deadline = time.monotonic() + timeout
        while True:
            with self.v.cond:
                new, self.seen = self.v.events[self.seen:], len(self.v.events)
            for ev in new:
                if ev["type"] == "doc_changed" and ev["notebook_id"] == self.nb:
                    assert ev["epoch"] == self.epoch
                    self.doc.apply_update(base64.b64decode(ev["update"]))
            self.outbox.clear()  # applying remote updates is not a local change to send
            if until():
                return
            assert time.monotonic() < deadline, f"not reached in {timeout}s: {self.cells.to_py()}"
            time.sleep(0.02)


def _append(text: Text, more: str) -> None:
    # Not `cells[0]["source"] += more`: that would also assign the Text back into its Map.
    text += more


class _Nb:
    def __init__(self, notebook_id: str) -> None:
        self.id = notebook_id


def _stored(server: Server, notebook_id: str) -> list[str]:
    return [c.source for c in server.store.get_notebook(notebook_id).cells]


def _saved(server: Server, peer: Peer, want: list[str]) -> dict[str, Any]:
    """Move the clock by the save delay: the saver stores `want`, and the room hears doc_saved."""
    seen = len(peer.v.events)
    assert _stored(server, peer.nb) != want  # not before the delay
    _clock(server).wait_sleeping(1)  # the saver, between ticks: it sees the move at its next one
    _clock(server).advance(server.app.extensions["config"].COEDIT_SAVE_SECONDS)
    return peer.v.wait_for(lambda e: e["type"] == "doc_saved" and e["notebook_id"] == peer.nb
                           and _stored(server, peer.nb) == want, after=seen)


def test_two_editors_typing_at_once_merge_and_the_merge_is_stored(server: Server, viewer: Any) -> None:
    nb = server.notebook("select 1 as a;")
    a, b = Peer(viewer(), nb.id), Peer(viewer(), nb.id)
    assert a.text() == b.text() == "select 1 as a;"
    # Both type before seeing the other's keystrokes: one at the start, one at the end.
    a.cells[0]["source"].insert(0, "-- ada\n")
    _append(b.cells[0]["source"], " -- bob")
    a.send()
    b.send()
    a.receive(lambda: "bob" in a.text())
    b.receive(lambda: "ada" in b.text())
    assert a.text() == b.text() == "-- ada\nselect 1 as a; -- bob"
    # Nothing echoes back to its sender: a's only doc_changed came from b.
    assert sum(1 for e in a.v.events if e["type"] == "doc_changed") == 1
    # The room hears the new revision, so pages keep a current base for REST writes.
    saved = _saved(server, a, ["-- ada\nselect 1 as a; -- bob"])
    assert saved["revision"] == server.store.get_notebook(nb.id).revision
    code, body = http(server, "GET", f"/api/notebooks/{nb.id}")
    assert code == 200 and body["cells"][0]["source"] == "-- ada\nselect 1 as a; -- bob"
    # A cell added in the document is stored, with the id the page gave it.
    a.cells.append(Map({"id": "newcell1", "kind": "python", "source": Text("print(1)")}))
    a.send()
    b.receive(lambda: len(b.cells) == 2)
    _saved(server, a, ["-- ada\nselect 1 as a; -- bob", "print(1)"])
    assert [c.kind for c in server.store.get_notebook(nb.id).cells] == ["mlsql", "python"]


def test_a_rest_edit_reaches_the_live_document_and_a_stale_one_gets_409(server: Server, viewer: Any) -> None:
    nb = server.notebook("first", "second")
    a = Peer(viewer(), nb.id)
    rev = server.store.get_notebook(nb.id).revision
    # A keystroke in the first cell, then a REST edit of the second one by a client that keeps up
    # with the revisions (the live save may land in between: then it asks again).
    _append(a.cells[0]["source"], "!")
    a.send()
    for _ in range(5):
        code, body = http(server, "PATCH", f"/api/notebooks/{nb.id}/cells/{nb.cells[1].id}",
                          {"source": "second, over REST", "base_revision": server.store.get_notebook(nb.id).revision})
        if code != 409:
            break
    assert code == 200, body
    a.receive(lambda: str(a.cells[1]["source"]) == "second, over REST")
    _saved(server, a, ["first!", "second, over REST"])  # neither side lost anything
    # A REST client still holding the old revision is refused; the merged text stands.
    code, body = http(server, "PATCH", f"/api/notebooks/{nb.id}/cells/{nb.cells[0].id}",
                      {"source": "stale", "base_revision": rev})
    assert code == 409, body
    assert _stored(server, nb.id) == ["first!", "second, over REST"]
    # A rename over REST with the revision the room was told is not a conflict.
    now = server.store.get_notebook(nb.id).revision
    told = a.v.wait_for(lambda e: e["type"] == "doc_saved" and e["revision"] == now)
    code, body = http(server, "POST", f"/api/notebooks/{nb.id}/rename",
                      {"name": "renamed", "base_revision": told["revision"]})
    assert code == 200, body


def test_a_run_stores_the_live_text_first(server: Server, viewer: Any) -> None:
    nb = server.notebook("--script\nprint 1 from worker\n")
    a = Peer(viewer(), nb.id)
    text: Text = a.cells[0]["source"]
    text.insert(len("--script\nprint "), "2")  # "print 21 from worker"
    a.send()
    ack = a.v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)
    assert ack["ok"], ack
    # Stored before the kernel was asked, without waiting for the save delay.
    assert _stored(server, nb.id) == ["--script\nprint 21 from worker\n"]
    a.v.wait_status(ack["run_ids"][0], "done")
    assert len([e for e in a.v.outputs(ack["run_ids"][0]) if e["text"]]) >= 1


def test_a_run_waits_for_the_text_its_page_shows_and_refuses_other_text(server: Server, viewer: Any) -> None:
    """The page sends the digest of each cell it runs as it shows it; the server runs only that."""
    nb = server.notebook("--script\nprint 1 from worker\n")
    a = Peer(viewer(), nb.id)
    clock = _clock(server)
    clock.wait_sleeping(1)  # the saver, started with the document
    cell_id = nb.cells[0].id
    # The page shows an edit the server never got: nothing runs, and the page learns which cell.
    shown = {cell_id: source_digest("--script\nprint 3 from worker\n")}
    answers: list[dict[str, Any]] = []
    asking = threading.Thread(target=lambda: answers.append(
        a.v.command("run_cell", notebook_id=nb.id, cell_id=cell_id, sources=shown)))
    asking.start()
    clock.wait_sleeping(2)  # and the run, waiting for the edit
    assert asking.is_alive() and not answers  # the clock has not moved: it still waits for the edit
    clock.advance(SETTLE_SECONDS)
    asking.join(30)
    (refused,) = answers
    assert refused["ok"] is False and refused["status"] == 409 and refused["stale"] == [cell_id], refused
    assert not [e for e in a.v.events if e["type"] == "cell_status"]
    # The edit arrives (the page syncs again): the same run now goes through, with that text.
    text: Text = a.cells[0]["source"]
    text.insert(len("--script\nprint "), "3")
    del text[len("--script\nprint 3"):len("--script\nprint 31")]
    a.send()
    ack = a.v.command("run_cell", notebook_id=nb.id, cell_id=cell_id, sources=shown)
    assert ack["ok"], ack
    assert _stored(server, nb.id) == ["--script\nprint 3 from worker\n"]
    a.v.wait_status(ack["run_ids"][0], "done")


def test_malformed_run_sources_are_refused_before_anything_runs(server: Server, viewer: Any) -> None:
    nb = server.notebook("select 1 as a;")
    v = viewer()
    join(v, nb)
    cell_id = nb.cells[0].id
    for sources, status in (("aeab66ca", 400), ({cell_id: 7}, 400), ({cell_id: "x" * 9}, 413),
                            ({"c" * 65: "aeab66ca"}, 413), ({f"c{i}": "0" for i in range(10_001)}, 413)):
        ack = v.command("run_cell", notebook_id=nb.id, cell_id=cell_id, sources=sources)
        assert ack["ok"] is False and ack["status"] == status, (sources if len(str(sources)) < 80 else "many", ack)
    assert not [e for e in v.events if e["type"] == "cell_status"]


def test_source_digest_is_fnv1a_of_the_utf8_text() -> None:
    # frontend/test/coedit.test.js checks sourceDigest against the same values.
    assert source_digest("") == "811c9dc5"
    assert source_digest("select 1 as a;") == "aeab66ca"
    assert source_digest("héllo ✓") == "b4ab03a7"


def test_viewer_may_sync_but_not_edit_and_outsiders_may_not_sync(server: Server, viewer: Any) -> None:
    nb = server.notebook("select 1 as a;")
    server.store.ensure_user("vic")
    server.store.ensure_user("olga")
    server.store.set_share(server.store.get_user_by_name("vic").id, "viewer", notebook_id=nb.id)
    vic = Peer(viewer("vic"), nb.id)  # a viewer syncs and watches
    _append(vic.cells[0]["source"], " -- vandal")
    (update,) = vic.outbox
    ack = vic.v.command("doc_update", notebook_id=nb.id, epoch=vic.epoch, update=base64.b64encode(update).decode())
    assert not ack["ok"] and ack["status"] == 403 and "editor" in ack["error"], ack
    olga = viewer("olga")
    for cmd in ("doc_sync", "awareness", "doc_update"):
        ack = olga.command(cmd, notebook_id=nb.id)
        assert not ack["ok"] and ack["status"] in (403, 404), (cmd, ack)
    time.sleep(0.3)
    coedit = server.app.extensions[COEDIT_KEY]
    assert [c[2] for c in coedit.text(nb.id)] == ["select 1 as a;"]
    assert _stored(server, nb.id) == ["select 1 as a;"]


def test_bad_updates_and_an_old_epoch_are_refused_by_name(server: Server, viewer: Any) -> None:
    nb = server.notebook("x")
    a = Peer(viewer(), nb.id)
    ack = a.v.command("doc_update", notebook_id=nb.id, epoch=a.epoch, update="%%%")
    assert ack["status"] == 400 and "base64" in ack["error"]
    ack = a.v.command("doc_update", notebook_id=nb.id, epoch=a.epoch, update=base64.b64encode(b"\xff\x01").decode())
    assert ack["status"] == 400 and "not a Yjs update" in ack["error"]
    ack = a.v.command("doc_update", notebook_id=nb.id, epoch="old-epoch", update=base64.b64encode(b"\x00\x00").decode())
    assert ack["status"] == 409 and "doc_sync" in ack["error"]
    # A sync with an old epoch gets the whole document (the page rebuilds), not a diff.
    state = base64.b64encode(a.doc.get_state()).decode()
    ack = a.v.command("doc_sync", notebook_id=nb.id, epoch="old-epoch", state_vector=state)
    fresh: Doc = Doc()
    fresh.apply_update(base64.b64decode(ack["update"]))
    assert read_cells(fresh.get("cells", type=Array)) == [(nb.cells[0].id, "mlsql", "x")]


def test_presence_reaches_the_room_and_leaving_is_told(server: Server, viewer: Any) -> None:
    from console.server.live.yjs_wire import read_awareness, write_awareness

    nb = server.notebook("x")
    a, b = Peer(viewer(), nb.id), Peer(viewer(), nb.id)
    payload = base64.b64encode(write_awareness([(42, 1, {"cell": "c1"})])).decode()
    assert a.v.command("awareness", notebook_id=nb.id, client_id=42, update=payload)["ok"]
    got = b.v.wait_for(lambda e: e["type"] == "presence" and e["update"])
    assert got["left"] == []
    ((client, clock, state),) = read_awareness(base64.b64decode(got["update"]))
    assert (client, clock, state["cell"]) == (42, 1, "c1") and state["user"]["name"]
    # A page that joins later gets everyone's last presence with its sync.
    c = viewer()
    join(c, nb)
    assert c.command("doc_sync", notebook_id=nb.id)["awareness"] == [got["update"]]
    a.v.close()
    b.v.wait_for(lambda e: e["type"] == "presence" and e["left"] == [42])
