"""Site roles against a real server in login mode: a reader (rita) views what is shared with it and
nothing more, whatever role the share names; a member runs; a new site role holds from the next
request on, an open socket included.

Everything goes over HTTP and a websocket on 127.0.0.1, logged in through POST /api/login.
"""
from __future__ import annotations

import time
from typing import Any

import pytest
import requests
from flask import Flask

from authz_world import build_world
from security_support import PASSWORD, socket_as

RUN_COMMANDS = ("run_cell", "run_all", "run_from", "interrupt", "restart")


class Http:
    """A logged-in browser stand-in: the session cookie plus the CSRF header on every request."""

    def __init__(self, url: str, name: str) -> None:
        self.url, self.s = url, requests.Session()
        r = self.s.post(f"{url}/api/login", json={"username": name, "password": PASSWORD}, timeout=30)
        assert r.status_code == 200, r.text
        self.s.headers["X-CSRF-Token"] = r.json()["csrf_token"]

    def __call__(self, method: str, path: str, body: Any = None) -> requests.Response:
        return self.s.request(method, f"{self.url}{path}", json=body, timeout=60)


def _command(cmd: str, w: Any) -> dict[str, Any]:
    return {"type": cmd, "notebook_id": w.nb, **({"cell_id": w.cells[0]} if cmd in ("run_cell", "run_from") else {})}


def _wait_done(store: Any, run_id: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = store.get_run(run_id).status
        if status not in ("queued", "running"):
            return str(status)
        time.sleep(0.05)
    return "timeout"


def _all_runs(store: Any) -> set[str]:
    return {r.id for nb in store.find_notebooks() for r in store.list_runs(nb.id)}


@pytest.mark.timeout(120)
def test_a_reader_with_an_editor_share_only_views(mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    w = build_world(store)  # rita: an editor share on the folder
    rita_id = store.get_user_by_name("rita").id
    store.set_share(rita_id, "editor", notebook_id=w.nb)  # and one on the notebook itself
    notebooks, runs = len(store.find_notebooks()), _all_runs(store)
    rita = Http(served_url, "rita")

    me = rita("GET", "/api/me").json()
    assert me["user"]["site_role"] == "reader" and not me["user"]["is_admin"]
    assert [r["name"] for r in me["site_roles"]] == ["reader", "member", "admin"]
    got = rita("GET", f"/api/notebooks/{w.nb}")
    assert got.status_code == 200 and got.json()["role"] == "viewer"  # the editor shares count as viewer
    assert rita("GET", f"/api/notebooks/{w.nb}/runs").status_code == 200
    assert rita("GET", f"/api/runs/{w.run}/outputs?since=0").status_code == 200
    assert rita("GET", f"/api/notebooks/{w.nb}/export?format=ipynb").status_code == 200

    nb = f"/api/notebooks/{w.nb}"
    refused = [
        ("POST", f"{nb}/run", {"all": True}), ("POST", f"{nb}/run", {"cell_id": w.cells[0]}),
        ("POST", f"{nb}/interrupt", None), ("POST", f"{nb}/restart", None),
        ("POST", f"{nb}/fork", None), ("POST", f"{nb}/duplicate", {"folder": "/"}),
        ("POST", "/api/notebooks", {"name": "mine", "cells": [{"kind": "python", "source": "print(1)"}]}),
        ("POST", "/api/notebooks/import", {"format": "mlsql-console-notebook", "version": 1, "name": "imp",
                                           "cells": [{"kind": "python", "source": "print(1)"}]}),
        ("POST", "/api/folders", {"path": "/rita"}), ("POST", "/api/folders", {"path": f"{w.folder}/proj/x"}),
        ("PATCH", f"{nb}/cells/{w.cells[0]}", {"base_revision": 2, "source": "select 2 as b;"}),
        ("POST", f"{nb}/cells", {"base_revision": 2, "source": "y"}),
        ("POST", f"{nb}/shares", {"user": "mallory", "role": "viewer"}),
        ("POST", f"{nb}/links", None),
    ]
    for method, path, body in refused:
        r = rita(method, path, body)
        assert r.status_code == 403, (method, path, r.status_code, r.text)
    r = rita("POST", f"{nb}/run", {"all": True})
    assert "member" in r.json()["error"] and "reader" in r.json()["error"]  # says why, not just "no"
    assert len(store.find_notebooks()) == notebooks and _all_runs(store) == runs
    assert store.get_notebook(w.nb).revision == 2  # nothing edited


@pytest.mark.timeout(120)
def test_a_reader_cannot_run_over_the_socket(mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    w = build_world(store)
    store.set_share(store.get_user_by_name("rita").id, "owner", notebook_id=w.nb)  # even "owner" is viewer
    runs = _all_runs(store)
    rita = socket_as(served_url, "rita")
    try:
        for cmd in RUN_COMMANDS:
            ack = rita.call("command", _command(cmd, w), timeout=30)
            assert ack["ok"] is False and ack["status"] == 403 and "member" in ack["error"], (cmd, ack)
        assert rita.call("command", {"type": "join", "notebook_id": w.nb}, timeout=30)["ok"]  # watching is fine
        assert rita.call("command", {"type": "leave", "notebook_id": w.nb}, timeout=30)["ok"]
    finally:
        rita.disconnect()
    assert _all_runs(store) == runs


@pytest.mark.timeout(240)
def test_a_member_viewer_forks_and_runs_the_fork_until_made_a_reader(mu_app: Flask, served_url: str) -> None:
    """A viewer who is a member may fork and run the copy (the copy is theirs); once made a
    reader, the same account owns the fork but holds it as viewer, so it can neither run it
    nor fork again."""
    store = mu_app.extensions["store"]
    w = build_world(store)  # vera views the notebook through the folder share
    vera = Http(served_url, "vera")
    fork = vera("POST", f"/api/notebooks/{w.nb}/fork")
    assert fork.status_code == 201, fork.text
    fork_id, cell = fork.json()["id"], fork.json()["cells"][0]["id"]
    r = vera("POST", f"/api/notebooks/{fork_id}/run", {"cell_id": cell})
    assert r.status_code in (200, 201, 202), r.text
    (run_id,) = r.json()["run_ids"]
    assert _wait_done(store, run_id) == "done"

    store.set_site_role(store.get_user_by_name("vera").id, "reader")  # what `users set-role vera reader` does
    runs = _all_runs(store)
    got = vera("GET", f"/api/notebooks/{fork_id}")
    assert got.status_code == 200 and got.json()["role"] == "viewer"  # her own notebook, held as viewer
    assert vera("POST", f"/api/notebooks/{fork_id}/run", {"cell_id": cell}).status_code == 403
    assert vera("POST", f"/api/notebooks/{fork_id}/fork").status_code == 403
    assert vera("DELETE", f"/api/notebooks/{fork_id}").status_code == 403
    sock = socket_as(served_url, "vera")
    try:
        ack = sock.call("command", {"type": "run_cell", "notebook_id": fork_id, "cell_id": cell}, timeout=30)
        assert ack["ok"] is False and ack["status"] == 403, ack
    finally:
        sock.disconnect()
    assert _all_runs(store) == runs


@pytest.mark.timeout(240)
def test_set_role_holds_from_the_next_request_and_command(mu_app: Flask, served_url: str) -> None:
    """No new login: the open HTTP session and the open socket follow the stored site role."""
    store = mu_app.extensions["store"]
    w = build_world(store)  # rudy runs /teamN by a folder share; rita has an editor share there
    rita_id, rudy_id = store.get_user_by_name("rita").id, store.get_user_by_name("rudy").id
    rita, rita_sock = Http(served_url, "rita"), socket_as(served_url, "rita")
    rudy, rudy_sock = Http(served_url, "rudy"), socket_as(served_url, "rudy")
    try:
        assert rita("POST", f"/api/notebooks/{w.nb}/run", {"all": True}).status_code == 403
        assert rita("POST", "/api/notebooks", {"name": "r"}).status_code == 403
        store.set_site_role(rita_id, "member")  # promoted: her editor share counts in full
        assert rita("GET", f"/api/notebooks/{w.nb}").json()["role"] == "editor"
        assert rita("POST", "/api/notebooks", {"name": "r"}).status_code == 201
        assert rita_sock.call("command", {"type": "join", "notebook_id": w.nb}, timeout=30)["ok"]
        ack = rita_sock.call("command", _command("run_cell", w), timeout=60)
        assert ack["ok"], ack
        assert _wait_done(store, ack["run_ids"][0]) == "done"

        store.set_site_role(rudy_id, "reader")  # demoted while logged in, socket open
        runs = _all_runs(store)
        r = rudy("POST", f"/api/notebooks/{w.nb}/run", {"all": True})
        assert r.status_code == 403 and "reader" in r.json()["error"], r.text
        ack = rudy_sock.call("command", _command("run_all", w), timeout=30)
        assert ack["ok"] is False and ack["status"] == 403, ack
        assert _all_runs(store) == runs
        assert rudy("GET", f"/api/notebooks/{w.nb}").json()["role"] == "viewer"
    finally:
        for sock in (rita_sock, rudy_sock):
            sock.disconnect()


def test_sharing_more_than_viewer_with_a_reader_is_refused_clearly(mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    w = build_world(store)  # alice owns; rita already holds an editor share on the folder
    alice = Http(served_url, "alice")
    for role in ("runner", "editor", "owner"):
        r = alice("POST", f"/api/notebooks/{w.nb}/shares", {"user": "rita", "role": role})
        assert r.status_code == 400 and "rita is a reader" in r.json()["error"] and "viewer" in r.json()["error"]
        r = alice("POST", "/api/folders/shares", {"path": w.folder, "user": "rita", "role": role})
        assert r.status_code == 400 and "rita is a reader" in r.json()["error"]
    r = alice("POST", f"/api/notebooks/{w.nb}/shares", {"user": "rita", "role": "viewer"})
    assert r.status_code == 201 and r.json()["effective_role"] == "viewer"
    # The editor share stored before she was a reader is listed with what it gives her now.
    (old,) = [s for s in alice("GET", f"/api/folders/shares?path={w.folder}").json()["shares"]
              if s["username"] == "rita"]
    assert old["role"] == "editor" and old["effective_role"] == "viewer" and old["site_role"] == "reader"
    users = {u["username"]: u["site_role"] for u in alice("GET", "/api/users").json()["users"]}
    assert users["rita"] == "reader" and users["alice"] == "member"
