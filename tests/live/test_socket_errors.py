"""A socket command's refusal reads as the HTTP API's: one mapping (console/server/errors.py error_body).

The socket path once had a mapping of its own: a Conflict lost its `current_revision` there, and
bad input that failed only in the store (a number past 64 bits, a DataError) was a 500 on the
socket where HTTP said 400.
"""
from __future__ import annotations

from collections.abc import Callable

import pytest

from console.server.errors import error_body
from console.store import Conflict
from tests.support.clients import Viewer, http
from tests.support.live_server import LiveServer


def test_a_refusal_has_the_same_status_on_the_socket_and_over_http(server: LiveServer,
                                                                  viewer: Callable[..., Viewer]) -> None:
    ack = viewer().command("join", notebook_id="nosuchnotebook")
    code, body = http(server, "GET", "/api/notebooks/nosuchnotebook")
    assert ack["ok"] is False and ack["status"] == code == body["status"], (ack, body)
    ack = viewer().command("run_cell", notebook_id="nosuchnotebook", cell_id="c1")
    assert ack["ok"] is False and ack["status"] == 404, ack


def test_one_body_for_a_stale_save_and_for_bad_input_the_store_refused(server: LiveServer) -> None:
    nb = server.notebook("select 1 as a as t;")
    server.store.update_notebook(nb.id, nb.revision, name="renamed")
    with pytest.raises(Conflict) as stale:
        server.store.update_notebook(nb.id, nb.revision, name="stale")  # the revision it read is gone
    with pytest.raises(OverflowError) as past_64_bits:
        server.store.get_user(2 ** 70)  # SQLite's integers stop at 64 bits
    with server.app.app_context():
        conflict = error_body(stale.value)
        overflow = error_body(past_64_bits.value)
    assert conflict["status"] == 409 and conflict["current_revision"] == nb.revision + 1, conflict
    assert overflow == {"status": 400, "error": "a value in the request is out of range or not valid text"}
