"""Co-editing from a hostile page, against a real server over real Socket.IO clients (issue 21 §4/§5).

Presence is only for sockets in the room and only for the page's own awareness client id, and
the server writes the sender's account into every state it relays: a viewer cannot show up as
the admin. A document is capped by what it costs the server (items, not bytes), with a refusal
that says so; wrong field types are refused by the browser vocabulary's decoder.
"""
from __future__ import annotations

import base64
import gc
from typing import Any

import pytest
from pycrdt import Array, Doc, Text

from console.server.live.coedit import COEDIT_KEY
from console.server.live.yjs_wire import read_awareness, write_awareness
from tests.live.test_coedit import Peer
from tests.support.clients import join
from tests.support.live_server import LiveServer as Server


def _awareness(client_id: int, state: dict[str, Any] | None, clock: int = 1) -> str:
    return base64.b64encode(write_awareness([(client_id, clock, state)])).decode()


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def test_awareness_needs_the_room_and_is_stamped_with_the_senders_account(server: Server, viewer: Any) -> None:
    nb = server.notebook("x")
    vic_user = server.store.ensure_user("vic")
    server.store.set_share(vic_user.id, "viewer", notebook_id=nb.id)
    admin = Peer(viewer(), nb.id)
    vic = viewer("vic")
    claim = {"user": {"name": "admin", "id": server.store.get_user_by_name("admin").id, "color": "#d9480f"},
             "cell": nb.cells[0].id}
    # Not joined yet: refused, and nothing reaches the room.
    ack = vic.command("awareness", notebook_id=nb.id, client_id=7, update=_awareness(7, claim))
    assert ack["ok"] is False and ack["status"] == 403 and "join" in ack["error"], ack
    join(vic, nb)
    # Joined: relayed, but as vic, whatever the state claims.
    assert vic.command("awareness", notebook_id=nb.id, client_id=7, update=_awareness(7, claim))["ok"]
    got = admin.v.wait_for(lambda e: e["type"] == "presence" and e["update"])
    ((client, _clock, state),) = read_awareness(base64.b64decode(got["update"]))
    assert client == 7 and state["cell"] == nb.cells[0].id
    assert state["user"] == {"name": "vic", "id": vic_user.id, "color": "#d9480f"}
    # Another page's client id, in the update or as the sender's own: refused.
    ack = vic.command("awareness", notebook_id=nb.id, client_id=7, update=_awareness(8, claim))
    assert ack["status"] == 403 and "own client_id" in ack["error"], ack
    ack = admin.v.command("awareness", notebook_id=nb.id, client_id=7, update=_awareness(7, {"cell": None}, 2))
    assert ack["status"] == 403 and "another page" in ack["error"], ack
    # Not an awareness update at all; a state that is not an object.
    ack = vic.command("awareness", notebook_id=nb.id, client_id=7, update=base64.b64encode(b"\x05\x01").decode())
    assert ack["status"] == 400 and "awareness update" in ack["error"], ack
    ack = vic.command("awareness", notebook_id=nb.id, client_id=7,
                      update=base64.b64encode(write_awareness([(7, 3, None)])[:-4] + b"\x01[]").decode())
    assert ack["status"] == 400, ack


def test_wrong_field_types_are_refused_by_the_decoder(server: Server, viewer: Any) -> None:
    nb = server.notebook("x")
    v = viewer()
    join(v, nb)
    cases = [
        ({"type": "leave", "notebook_id": [nb.id]}, "leave.notebook_id: must be a string, not a list"),
        ({"type": "leave", "notebook_id": {"a": 1}}, "leave.notebook_id: must be a string, not an object"),
        ({"type": "awareness", "notebook_id": nb.id, "update": 5},
         "awareness.update: must be a string, not an integer"),
        ({"type": "awareness", "notebook_id": nb.id, "client_id": "7"},
         "awareness.client_id: must be an integer, not a string"),
        ({"type": "join", "notebook_id": nb.id, "since": {"r": "1"}},
         "join.since['r']: must be an integer, not a string"),
        ({"type": "doc_update", "notebook_id": nb.id, "update": None}, "doc_update.update: must be a string, not null"),
    ]
    for command, error in cases:
        ack = v.sio.call("command", command, timeout=30)
        assert ack == {"ok": False, "status": 400, "error": error}, (command, ack)
    ack = v.sio.call("command", {"type": "leave", "notebook_id": "x" * 65}, timeout=30)
    assert ack == {"ok": False, "status": 413, "error": "leave.notebook_id: longer than 64 characters"}, ack


# Serial: it reads this process's resident memory, which an xdist worker's earlier tests (and
# their freed but kept arenas) blur; alone it sees only what the refused update cost.
@pytest.mark.serial
def test_a_document_is_capped_by_what_it_costs_not_by_its_bytes(server: Server, viewer: Any) -> None:
    nb = server.notebook("x")
    a = Peer(viewer(), nb.id)
    coedit = server.app.extensions[COEDIT_KEY]
    # 2.8 MB of one-character inserts, each its own Yjs item: 47 MB inside Yrs before the cap.
    scratch: Doc = Doc()
    scratch.apply_update(a.doc.get_update())
    text: Text = scratch.get("cells", type=Array)[0]["source"]
    sent: list[bytes] = []
    sub = scratch.observe(lambda e: sent.append(e.update))
    with scratch.transaction():
        for _ in range(200_000):
            text.insert(0, "ab")
    scratch.unobserve(sub)
    (many,) = sent
    assert len(many) > 2_500_000
    encoded = base64.b64encode(many).decode()
    grown = []
    for _ in range(2):  # the first also warms up buffers of the client and server in this process
        gc.collect()
        before = _rss_mb()
        ack = a.v.command("doc_update", notebook_id=nb.id, epoch=a.epoch, update=encoded)
        gc.collect()
        grown.append(_rss_mb() - before)
        assert ack["ok"] is False and ack["status"] == 413, ack
        assert "larger than its limit of 8388608 bytes" in ack["error"] and "DOC_MAX_BYTES" in ack["error"], ack
    assert [c[2] for c in coedit.text(nb.id)] == ["x"]  # nothing of it was applied
    # Applied, this update grew the server by 66 MB (47 MB of it in Yrs).
    assert grown[1] < 20, f"the server grew by {grown} MB for a refused update"
    # The same bytes as one pasted text are one item: taken.
    _paste = a.cells[0]["source"]
    _paste += "y" * 2_800_000
    assert a.send()["ok"]
    assert len(coedit.text(nb.id)[0][2]) == 2_800_001
