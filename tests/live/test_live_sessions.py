"""A real server on 127.0.0.1, real kernel processes, Socket.IO clients over websocket."""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import time
from typing import Any

import pytest

from tests.support.clients import http, join
from tests.support.live_server import LiveServer as Server
from tests.support.scripted_engine import actor_source


def test_mlsql_cell_runs_and_its_result_is_stored(server: Server, viewer: Any) -> None:
    nb = server.notebook("select 1 as a, 'x' as b as t;")
    v = viewer()
    join(v, nb)
    ack = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)
    assert ack["ok"], ack
    run_id = ack["run_ids"][0]
    v.wait_status(run_id, "queued")
    v.wait_status(run_id, "running")
    done = v.wait_status(run_id, "done", "error")
    assert done["status"] == "done", v.events
    result = v.wait_for(lambda e: e["type"] == "result" and e["run_id"] == run_id)
    assert result["rows"] == [[1, "x"]] and result["name"] == "t"
    v.wait_for(lambda e: e["type"] == "kernel_status" and e["status"] == "idle")
    # A page loaded later sees the result without running anything.
    later = viewer()
    join(later, nb)
    stored = later.wait_for(lambda e: e["type"] == "result" and e["run_id"] == run_id)
    assert stored["rows"] == [[1, "x"]]
    code, body = http(server, "GET", f"/api/runs/{run_id}")
    assert code == 200 and body["status"] == "done"


def test_burst_from_two_sources_arrives_complete_and_in_order(server: Server, viewer: Any) -> None:
    nb = server.notebook("--script\nactors 5000 from A, B\n")
    v = viewer()
    join(v, nb)
    run_id = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    assert v.wait_status(run_id, "done", "error", timeout=120)["status"] == "done"
    chunks = v.outputs(run_id)
    assert [c["seq"] for c in chunks] == list(range(1, len(chunks) + 1))
    assert len(chunks) < 1000  # batched, not one event per line
    for name in ("A", "B"):
        text = "".join(c["text"] for c in chunks if c["source"] == actor_source(name))
        assert text.splitlines() == [f"{name} says {i}" for i in range(1, 5001)]
    stored = server.store.outputs_since(run_id)
    assert [(c.seq, c.text) for c in stored] == [(c["seq"], c["text"]) for c in chunks]


def test_reconnect_gets_exactly_the_missed_chunks(server: Server, viewer: Any) -> None:
    nb = server.notebook("--script\nprint 200 every 0.01\n")
    first = viewer()
    join(first, nb)
    run_id = first.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    first.wait_for(lambda e: e["type"] == "output" and e["run_id"] == run_id and e["seq"] >= 3)
    first.close()  # the page goes away mid-run
    seen = first.outputs(run_id)
    last = seen[-1]["seq"]
    assert [c["seq"] for c in seen] == list(range(1, last + 1))
    time.sleep(0.5)
    second = viewer()
    join(second, nb, since={run_id: last})
    assert second.wait_status(run_id, "done", timeout=60)["status"] == "done"
    rest = second.outputs(run_id)
    assert [c["seq"] for c in rest] == list(range(last + 1, last + 1 + len(rest)))
    text = "".join(c["text"] for c in seen + rest)
    assert text.splitlines() == [f"line {i}" for i in range(1, 201)]


def test_progress_redraws_are_collapsed_before_storing(server: Server, viewer: Any) -> None:
    nb = server.notebook("--script\nprogress 500\n")
    v = viewer()
    join(v, nb)
    run_id = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    v.wait_status(run_id, "done")
    chunks = [c.text for c in server.store.outputs_since(run_id)]
    # Collapsed: each stored chunk is the line as it last looked in its batch, a redraw only at its
    # start. How many batches the 500 redraws span depends on the machine's speed; that count is
    # proven on a moved clock (tests/outputs/test_batcher_clock.py).
    assert all("\r" not in c[1:] and c.count("/500 [") <= 1 for c in chunks), chunks[:3]
    assert len(chunks) < 500
    stored = "".join(chunks)
    assert stored.endswith(f"500/500 [{'=' * 500}>] - loss: 0.0020\n")


def test_interrupt_stops_the_cell_and_cancels_the_queue(server: Server, viewer: Any) -> None:
    nb = server.notebook("--script\nsleep 60\n", "select 1 as a as t;")
    v = viewer()
    join(v, nb)
    ids = v.command("run_all", notebook_id=nb.id)["run_ids"]
    v.wait_status(ids[0], "running")
    ack = v.command("interrupt", notebook_id=nb.id)
    assert ack["ok"] and ack["interrupted"] == ids[0] and ack["cancelled"] == [ids[1]]
    assert v.wait_status(ids[0], "interrupted", "error", "done")["status"] == "interrupted"
    assert v.wait_status(ids[1], "cancelled")  # (a sleep that ran out would have ended "done")


def test_an_interrupt_sent_just_as_the_cell_was_announced_running_stops_it(server: Server, viewer: Any) -> None:
    """The kernel announced the cell, then its engine forgot 'an earlier cell's interrupt' when the
    cell started: an interrupt that came in between was lost and a 60 s sleep ran to its end (d1,
    a fresh-clone run under load). The scripted kernel holds the cell there until the interrupt."""
    nb = server.notebook("--script\nhold_next_start\n", "--script\nsleep 60\n")
    v = viewer()
    join(v, nb)
    first = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    v.wait_status(first, "done")
    held = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[1].id)["run_ids"][0]
    v.wait_status(held, "running")
    assert v.command("interrupt", notebook_id=nb.id)["interrupted"] == held
    assert v.wait_status(held, "interrupted", "error", "done", timeout=30)["status"] == "interrupted"


def test_kill_9_of_the_kernel_is_explained_and_restart_works(server: Server, viewer: Any) -> None:
    nb = server.notebook("select 2 as two as t;", "--script\nprint 5\nsleep 60\n", "select 3 as three as u;")
    other = server.notebook("select 7 as seven as s;")
    v = viewer()
    join(v, nb)
    join(v, other)
    ok_run = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    v.wait_status(ok_run, "done")
    other_run = v.command("run_cell", notebook_id=other.id, cell_id=other.cells[0].id)["run_ids"][0]
    v.wait_status(other_run, "done")
    ids = v.command("run_from", notebook_id=nb.id, cell_id=nb.cells[1].id)["run_ids"]
    v.wait_for(lambda e: e["type"] == "output" and e["run_id"] == ids[0] and "line 5" in e["text"])
    pid = server.manager.session(server.store.get_user_by_name("admin").id, nb.id).kernel.pid
    os.kill(pid, signal.SIGKILL)
    dead = v.wait_for(lambda e: e["type"] == "kernel_status" and e["notebook_id"] == nb.id and e["status"] == "dead")
    assert "SIGKILL" in dead["reason"] and "out of memory?" in dead["reason"]
    err = v.wait_for(lambda e: e["type"] == "error" and e["run_id"] == ids[0])
    assert err["kind"] == "kernel" and "SIGKILL" in err["message"]
    assert v.wait_status(ids[0], "error")
    assert v.wait_status(ids[1], "cancelled")
    # The notebook, its earlier output and the other notebook's kernel are intact.
    assert len(server.store.get_notebook(nb.id).cells) == 3
    assert server.store.get_run(ok_run).result["rows"] == [[2]]
    assert "line 5" in "".join(c.text for c in server.store.outputs_since(ids[0]))
    again = v.command("run_cell", notebook_id=other.id, cell_id=other.cells[0].id)["run_ids"][0]
    assert v.wait_status(again, "done")["status"] == "done"
    # Restart brings a fresh kernel.
    assert v.command("restart", notebook_id=nb.id)["ok"]
    v.wait_for(lambda e: e["type"] == "kernel_status" and e["notebook_id"] == nb.id and e["status"] == "idle")
    after = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[2].id)["run_ids"][0]
    assert v.wait_status(after, "done")["status"] == "done"


def test_user_without_access_can_neither_join_nor_run(server: Server, viewer: Any) -> None:
    nb = server.notebook("select 1 as a as t;", owner="alice")
    mallory = viewer("mallory")
    # 403, or 404 where the access policy hides that the notebook exists.
    ack = mallory.command("join", notebook_id=nb.id)
    assert not ack["ok"] and ack["status"] in (403, 404)
    ack = mallory.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)
    assert not ack["ok"] and ack["status"] in (403, 404)
    code, _ = http(server, "POST", f"/api/notebooks/{nb.id}/run", {"all": True}, user="mallory")
    assert code in (403, 404)
    alice = viewer("alice")
    join(alice, nb)
    # The room is closed to mallory: alice's run reaches alice only.
    run_id = alice.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    alice.wait_status(run_id, "done")
    time.sleep(0.3)
    assert not [e for e in mallory.events if e.get("notebook_id") == nb.id]
    # A viewer share lets mallory watch, not run.
    server.store.set_share(server.store.get_user_by_name("mallory").id, "viewer", notebook_id=nb.id)
    assert mallory.command("join", notebook_id=nb.id)["ok"]
    assert mallory.command("run_all", notebook_id=nb.id)["status"] == 403


def test_rest_run_returns_202_and_the_log_downloads(server: Server, viewer: Any) -> None:
    nb = server.notebook("--script\nprint 50 from worker\n")
    v = viewer()
    join(v, nb)
    code, body = http(server, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": nb.cells[0].id})
    assert code == 202
    run_id = body["run_ids"][0]
    v.wait_status(run_id, "done")
    code, log = http(server, "GET", f"/api/runs/{run_id}/log")
    assert code == 200 and log.splitlines()[0] == "(worker) line 1" and len(log.splitlines()) == 50
    code, body = http(server, "GET", f"/api/runs/{run_id}/outputs?since=0")
    assert code == 200 and "".join(e["text"] for e in body["events"] if e["type"] == "output").count("\n") == 50


def test_interrupt_while_the_kernel_starts(server: Server, viewer: Any) -> None:
    nb = server.notebook("--script\nsleep 60\n", "--script\nsleep 60\n")
    v = viewer()
    join(v, nb)
    ids = v.command("run_all", notebook_id=nb.id)["run_ids"]
    ack = v.command("interrupt", notebook_id=nb.id)  # the kernel process is still importing
    assert ack["interrupted"] == ids[0] and ack["cancelled"] == [ids[1]]
    assert v.wait_status(ids[0], "interrupted", "done", "error", timeout=60)["status"] == "interrupted"
    v.wait_for(lambda e: e["type"] == "kernel_status" and e["notebook_id"] == nb.id and e["status"] == "idle")


def test_rest_interrupt_restart_and_kernel_state(server: Server, viewer: Any) -> None:
    nb = server.notebook("--script\nsleep 60\n")
    code, body = http(server, "GET", f"/api/notebooks/{nb.id}/kernel")
    assert code == 200 and body["kernels"] == []
    v = viewer()
    join(v, nb)
    code, body = http(server, "POST", f"/api/notebooks/{nb.id}/run", {"all": True})
    run_id = body["run_ids"][0]
    v.wait_status(run_id, "running")
    code, body = http(server, "GET", f"/api/notebooks/{nb.id}/kernel")
    assert body["kernels"][0]["status"] == "busy"
    code, body = http(server, "POST", f"/api/notebooks/{nb.id}/interrupt")
    assert code == 202 and body["interrupted"] == run_id
    assert v.wait_status(run_id, "interrupted")
    mark = len(v.events)
    code, _ = http(server, "POST", f"/api/notebooks/{nb.id}/restart")
    assert code == 202
    v.wait_for(lambda e: e["type"] == "kernel_status" and e["status"] == "starting", after=mark)
    v.wait_for(lambda e: e["type"] == "kernel_status" and e["status"] == "idle", after=mark)
    code, body = http(server, "GET", f"/api/notebooks/{nb.id}/runs")
    assert body["runs"][nb.cells[0].id]["status"] == "interrupted"


def test_a_fault_of_ours_shows_its_id_not_the_servers_traceback(
        server: Server, viewer: Any, caplog: pytest.LogCaptureFixture) -> None:
    nb = server.notebook("--script\nprint 1\nfail boom in the engine\n", "select 1 as a as t;")
    v = viewer()
    join(v, nb)
    with caplog.at_level(logging.INFO, logger="console.server.sessions.kernels"):
        ids = v.command("run_all", notebook_id=nb.id)["run_ids"]
        assert v.wait_status(ids[0], "done", "error")["status"] == "error"
        err = v.wait_for(lambda e: e["type"] == "error" and e["run_id"] == ids[0])
        match = re.fullmatch(r"internal error ([0-9a-f]{8}); see the server log", err["message"])
        assert match and err["kind"] == "kernel" and err["traceback"] == "", err
        assert "boom" not in json.dumps(err)
        # The server's log has the traceback under that id, sent there by the kernel.
        deadline = time.monotonic() + 10
        while match.group(1) not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
    logged = [r.getMessage() for r in caplog.records if match.group(1) in r.getMessage()]
    assert logged and "Traceback" in logged[0] and "RuntimeError: boom in the engine" in logged[0]
    # Nothing of it reached the viewer, the stored run, or the next cell, which runs as usual.
    assert not [e for e in v.events if "boom" in json.dumps(e)]
    code, body = http(server, "GET", f"/api/runs/{ids[0]}")
    assert code == 200 and "boom" not in json.dumps(body) and match.group(1) in json.dumps(body)
    # Run all stops at the failed cell; run alone, the next cell runs as usual.
    assert v.wait_status(ids[1], "done", "error", "cancelled")["status"] == "cancelled"
    again = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[1].id)["run_ids"][0]
    assert v.wait_status(again, "done", "error")["status"] == "done"


def test_include_gets_the_named_notebook_from_the_server(server: Server, viewer: Any) -> None:
    name = f"lib-{time.monotonic_ns()}"
    admin = server.store.ensure_user("admin")
    server.store.create_notebook(name, owner_id=admin.id, cells=[
        {"kind": "mlsql", "source": "select 41 + 1 as answer as shared;"}, {"kind": "markdown", "source": "# x"}])
    nb = server.notebook(f"include notebook.`{name}`;\nselect answer from shared as t;", "include notebook.`no-such`;")
    v = viewer()
    join(v, nb)
    ids = v.command("run_all", notebook_id=nb.id)["run_ids"]
    assert v.wait_status(ids[0], "done", "error")["status"] == "done", v.events
    assert v.wait_for(lambda e: e["type"] == "result" and e["run_id"] == ids[0])["rows"] == [[42]]
    assert v.wait_status(ids[1], "done", "error")["status"] == "error"
    err = v.wait_for(lambda e: e["type"] == "error" and e["run_id"] == ids[1])
    assert err["message"] == "cannot include notebook 'no-such': no notebook named 'no-such'", err
