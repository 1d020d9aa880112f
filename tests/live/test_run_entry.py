"""Every run someone asks for goes through one entry (console/server/api/runs.py `start`), which stores
the live document first: a REST run (the parameter form's, a script's) once ran the text stored
before the latest typing, while the page's socket run stored it first.
"""
from __future__ import annotations

from typing import Any

from pycrdt import Text

from tests.live.test_coedit import Peer, _stored
from tests.support.clients import http
from tests.support.live_server import LiveServer


def test_a_rest_run_runs_what_was_just_typed_live(server: LiveServer, viewer: Any) -> None:
    nb = server.notebook("--script\nprint 1 from worker\n")
    alice = Peer(viewer(), nb.id)
    text: Text = alice.cells[0]["source"]
    text.insert(len("--script\nprint "), "7")  # "print 71 from worker", not yet stored (save delay)
    alice.send()
    code, body = http(server, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": nb.cells[0].id})
    assert code == 202, body
    assert _stored(server, nb.id) == ["--script\nprint 71 from worker\n"]
    (run_id,) = body["run_ids"]
    alice.v.wait_status(run_id, "done")
    assert any("71" in e["text"] for e in alice.v.outputs(run_id)), alice.v.outputs(run_id)
