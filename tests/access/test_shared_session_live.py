"""One live session per notebook, shared by its runners, against a real server and real kernels.

alice owns the notebook; eddie edits it (a folder share); vera views it; rudy runs it; mallory has
no role (authz_world.py). alice's table is eddie's to read in the same kernel, each run says who
ran it, an include is checked against whoever ran the cell, and the Running list and Shut down
follow the policy table: owner stops, runner sees, viewer and stranger neither.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest
from flask import Flask

from authz_world import build_world
from security_support import login, socket_as

FINAL = ("done", "error", "interrupted", "cancelled")


class Room:
    """A logged-in socket in the notebook's room, keeping every event it gets."""

    def __init__(self, url: str, name: str, notebook_id: str) -> None:
        self.sio, self.nb, self.events, self.lock = socket_as(url, name), notebook_id, [], threading.Lock()
        self.sio.on("event", self._on)
        assert self.sio.call("command", {"type": "join", "notebook_id": notebook_id}, timeout=30)["ok"]

    def _on(self, ev: dict[str, Any]) -> None:
        with self.lock:
            self.events.append(ev)

    def run(self, cell_id: str) -> str:
        ack = self.sio.call("command", {"type": "run_cell", "notebook_id": self.nb, "cell_id": cell_id}, timeout=60)
        assert ack["ok"], ack
        return str(ack["run_ids"][0])

    def wait(self, pred: Any, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                found = next((e for e in self.events if pred(e)), None)
            if found is not None:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no such event; got {self.events[-20:]}")

    def end(self, run_id: str) -> dict[str, Any]:
        end = self.wait(lambda e: e.get("type") == "cell_status" and e["run_id"] == run_id and e["status"] in FINAL)
        with self.lock:
            extra = [e for e in self.events if e.get("run_id") == run_id and e.get("type") in ("result", "error")]
        return {**end, "extra": extra}


@pytest.mark.timeout(300)
def test_runners_share_the_notebooks_session_and_each_run_says_who(mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    users = {u.username: u for u in store.list_users()}
    w = build_world(store)
    secret = store.create_notebook(f"secret{w.nb[:6]}", "/alice-only", owner_id=users["alice"].id,
                                   cells=[{"kind": "mlsql", "source": "select 7 as s as secret_t;"}])
    nb = store.create_notebook("shared", f"{w.folder}/proj", owner_id=users["alice"].id, cells=[
        {"kind": "mlsql", "source": "select 1 as a, 'x' as b as t;"},
        {"kind": "mlsql", "source": "select a + 41 as answer from t as u;"},
        {"kind": "mlsql", "source": f"include notebook.`{secret.name}`;\nselect s from secret_t as v;"}])
    c0, c1, c2 = (c.id for c in nb.cells)
    alice, eddie, vera = (Room(served_url, n, nb.id) for n in ("alice", "eddie", "vera"))
    try:
        first = alice.run(c0)
        assert alice.end(first)["status"] == "done"
        second = eddie.run(c1)  # B's cell reads A's table: one kernel for the notebook
        end = eddie.end(second)
        assert end["status"] == "done", end
        assert [e["rows"] for e in end["extra"] if e["type"] == "result"] == [[[42]]]
        # Everyone on the page (A too) is told who ran it; the stored run records B.
        told = alice.wait(lambda e: e.get("type") == "cell_status" and e["run_id"] == second and e["status"] == "done")
        assert told["run_by"] == "eddie" and told["user_id"] == users["eddie"].id
        assert store.get_run(second).user_id == users["eddie"].id
        assert store.get_run(first).user_id == users["alice"].id
        sessions = mu_app.extensions["sessions"].get().sessions_of(nb.id)
        assert len(sessions) == 1 and sessions[0].started_by == users["alice"].id

        # The include is checked against who ran the cell: alice may read her notebook, eddie may not,
        # though both run in the same kernel.
        mine = alice.run(c2)
        assert alice.end(mine)["status"] == "done"
        refused = eddie.run(c2)
        end = eddie.end(refused)
        assert end["status"] == "error", end
        (error,) = [e for e in end["extra"] if e["type"] == "error"]
        assert f"no notebook named {secret.name!r}" in error["message"], error

        # A viewer still cannot run, and a page that joins later sees who ran each cell.
        ack = vera.sio.call("command", {"type": "run_cell", "notebook_id": nb.id, "cell_id": c1}, timeout=30)
        assert ack["ok"] is False and ack["status"] == 403
        late = Room(served_url, "vera", nb.id)
        replayed = late.wait(lambda e: e.get("type") == "cell_status" and e["run_id"] == second)
        assert replayed["run_by"] == "eddie"
        late.sio.disconnect()

        # An interrupt says who did it to everyone on the page.
        ack = eddie.sio.call("command", {"type": "interrupt", "notebook_id": nb.id}, timeout=30)
        assert ack["ok"], ack
        said = vera.wait(lambda e: e.get("type") == "kernel_status" and e.get("action") == "interrupt")
        assert said["by"] == "eddie"
    finally:
        for room in (alice, eddie, vera):
            room.sio.disconnect()


@pytest.mark.timeout(300)
def test_running_sessions_list_and_shut_down_follow_the_roles(mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    users = {u.username: u for u in store.list_users()}
    w = build_world(store)
    rudy = Room(served_url, "rudy", w.nb)
    vera = Room(served_url, "vera", w.nb)
    try:
        assert rudy.end(rudy.run(w.cells[0]))["status"] == "done"
        session = mu_app.extensions["sessions"].get().sessions_of(w.nb)[0]
        pid = session.kernel.pid

        def listed(name: str) -> list[dict[str, Any]]:
            r = login(mu_app, name).get("/api/sessions")
            assert r.status_code == 200, r.json
            return [s for s in r.json["sessions"] if s["notebook_id"] == w.nb]

        (row,) = listed("alice")  # the owner
        assert row["notebook"] == "nb" and row["started_by"] == {"id": users["rudy"].id, "name": "rudy"}
        assert row["can_stop"] is True and row["status"] in ("idle", "busy")
        assert row["memory_bytes"] and row["memory_bytes"] > 1_000_000
        assert [r["name"] for r in row["runners"]] == ["rudy"]
        (seen,) = listed("rudy")  # a runner sees it, but it is not theirs to stop
        assert seen["can_stop"] is False
        assert listed("vera") == [] and listed("mallory") == []  # a viewer and a stranger do not see it

        for name, status in (("vera", 403), ("rudy", 403), ("mallory", 404), ("rita", 403)):
            r = login(mu_app, name).post(f"/api/sessions/{w.nb}/stop", json={})
            assert r.status_code == status, (name, r.status_code, r.json)
        assert session.kernel is not None and session.kernel.pid == pid
        os.kill(pid, 0)  # still alive after every refused stop

        r = login(mu_app, "alice").post(f"/api/sessions/{w.nb}/stop", json={"force": True})
        assert r.status_code == 400 and "force" in r.json["error"]
        r = login(mu_app, "alice").post(f"/api/sessions/{w.nb}/stop", json={})
        assert r.status_code == 200 and r.json == {"stopped": True}
        said = vera.wait(lambda e: e.get("type") == "kernel_status" and e.get("action") == "shutdown")
        assert said["by"] == "alice" and said["status"] == "dead"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"kernel {pid} still runs after Shut down")
        assert listed("alice") == []
    finally:
        rudy.sio.disconnect()
        vera.sio.disconnect()


@pytest.mark.timeout(300)
def test_the_per_user_cap_counts_the_kernels_a_user_started(cfg: Any) -> None:
    from security_support import make_app

    app = make_app(cfg, SESSIONS_PER_USER=1)
    try:
        store = app.extensions["store"]
        w = build_world(store)
        users = {u.username: u for u in store.list_users()}
        other = store.create_notebook("other", f"{w.folder}/proj", owner_id=users["alice"].id,
                                      cells=[{"kind": "mlsql", "source": "select 2 as b;"}])
        alice, eddie = login(app, "alice"), login(app, "eddie")
        assert alice.post(f"/api/notebooks/{w.nb}/run", json={"cell_id": w.cells[0]}).status_code == 202
        # eddie runs in the kernel alice started: no kernel of his, so his own cap is untouched
        assert eddie.post(f"/api/notebooks/{w.nb}/run", json={"cell_id": w.cells[0]}).status_code == 202
        r = alice.post(f"/api/notebooks/{other.id}/run", json={"cell_id": other.cells[0].id})
        assert r.status_code == 429 and "CONSOLE_SESSIONS_PER_USER = 1" in r.json["error"], r.json
        assert eddie.post(f"/api/notebooks/{other.id}/run", json={"cell_id": other.cells[0].id}).status_code == 202
        manager = app.extensions["sessions"].get()
        assert manager.sessions_of(other.id)[0].started_by == users["eddie"].id
    finally:
        app.extensions["sessions"].shutdown()
        app.extensions["store"].close()
