"""Socket commands against the real server: a viewer's run is refused by the policy table, a
runner's starts a run on a real kernel. Logged in for real, over a websocket on 127.0.0.1."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from flask import Flask

from authz_world import build_world
from security_support import socket_as


@pytest.mark.timeout(180)
def test_a_viewer_may_not_run_and_a_runner_may(mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    w = build_world(store)  # vera views and rudy runs /teamN by a folder share
    before = {r.id for r in store.list_runs(w.nb)}
    vera, rudy = socket_as(served_url, "vera"), socket_as(served_url, "rudy")
    statuses: list[dict[str, Any]] = []
    lock = threading.Lock()

    def on_event(ev: dict[str, Any]) -> None:
        if ev.get("type") == "cell_status":
            with lock:
                statuses.append(ev)

    def final_status(run_id: str) -> str | None:
        with lock:
            return next((e["status"] for e in statuses if e["run_id"] == run_id
                         and e["status"] in ("done", "error", "interrupted", "cancelled")), None)

    rudy.on("event", on_event)
    try:
        for cmd in ("run_cell", "run_all", "run_from", "interrupt", "restart"):
            ack = vera.call("command", {"type": cmd, "notebook_id": w.nb, **(
                {"cell_id": w.cells[0]} if cmd in ("run_cell", "run_from") else {})}, timeout=30)
            assert ack == {"ok": False, "status": 403, "error": ack["error"]} and "runner" in ack["error"], (cmd, ack)
        assert {r.id for r in store.list_runs(w.nb)} == before  # nothing started for the viewer
        assert vera.call("command", {"type": "join", "notebook_id": w.nb}, timeout=30)["ok"]  # watching is allowed

        assert rudy.call("command", {"type": "join", "notebook_id": w.nb}, timeout=30)["ok"]
        ack = rudy.call("command", {"type": "run_cell", "notebook_id": w.nb, "cell_id": w.cells[0]}, timeout=60)
        assert ack["ok"], ack
        (run_id,) = ack["run_ids"]
        deadline = time.monotonic() + 120
        while final_status(run_id) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert final_status(run_id) == "done", statuses
        assert store.get_run(run_id).user_id == store.get_user_by_name("rudy").id
    finally:
        vera.disconnect()
        rudy.disconnect()


@pytest.mark.timeout(120)
def test_run_params_over_the_socket_are_checked_before_anything_runs(mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    w = build_world(store)  # its notebook declares no parameter
    before = {r.id for r in store.list_runs(w.nb)}
    vera, rudy = socket_as(served_url, "vera"), socket_as(served_url, "rudy")
    try:
        ack = vera.call("command", {"type": "run_all", "notebook_id": w.nb, "params": {"day": "1"}}, timeout=30)
        assert ack["status"] == 403 and "runner" in ack["error"], ack  # params change nothing of who may run
        for cmd in ("run_cell", "run_all", "run_from"):
            fields = {"cell_id": w.cells[0]} if cmd != "run_all" else {}
            ack = rudy.call("command", {"type": cmd, "notebook_id": w.nb, "params": {"day": "1"}, **fields},
                            timeout=30)
            assert ack["ok"] is False and ack["status"] == 400 and "unknown parameter day" in ack["error"], ack
            ack = rudy.call("command", {"type": cmd, "notebook_id": w.nb, "params": {"day": 1}, **fields},
                            timeout=30)
            assert ack["ok"] is False and ack["status"] == 400, ack  # a value is text (the typed decoder)
        assert {r.id for r in store.list_runs(w.nb)} == before
    finally:
        vera.disconnect()
        rudy.disconnect()
