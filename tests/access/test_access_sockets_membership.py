"""A joined socket stops getting a notebook's events as soon as access goes: its login logs out, its
share is removed (on the notebook or on a folder above it). A socket still allowed some other way
stays. Also: a `command` without a JSON object gets an error ack. Real logins over a websocket to
the real app on 127.0.0.1; events go out through the kernel manager's own broadcaster."""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from flask import Flask

from authz_world import build_world
from security_support import PASSWORD

from console.server.auth import CSRF_HEADER
from console.server.live.sockets import broadcaster

pytestmark = pytest.mark.timeout(120)


class Login:
    """One login of `name` through POST /api/login, with a Socket.IO client on it that keeps its events."""

    def __init__(self, url: str, name: str) -> None:
        from tests.support.clients import ordered_client

        self.url = url
        req = urllib.request.Request(f"{url}/api/login", method="POST", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"username": name, "password": PASSWORD}).encode())
        with urllib.request.urlopen(req, timeout=30) as resp:
            self.csrf = json.loads(resp.read())["csrf_token"]
            self.cookie = "; ".join(c.split(";", 1)[0] for c in resp.headers.get_all("Set-Cookie"))
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.sio = ordered_client()
        self.sio.on("event", lambda d: self._keep("event", d))
        self.sio.on("revoked", lambda d: self._keep("revoked", d))
        self.sio.connect(url, transports=["websocket"], headers={"Cookie": self.cookie}, auth={"csrf": self.csrf},
                         wait_timeout=10)

    def _keep(self, name: str, data: dict[str, Any]) -> None:
        with self.lock:
            self.events.append((name, data))

    def got(self, name: str, pred: Any = lambda d: True) -> list[dict[str, Any]]:
        with self.lock:
            return [d for n, d in self.events if n == name and pred(d)]

    def join(self, nb: str) -> None:
        ack = self.sio.call("command", {"type": "join", "notebook_id": nb}, timeout=30)
        assert ack["ok"], ack

    def api(self, method: str, path: str, body: Any = None) -> int:
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "Cookie": self.cookie,
                                              CSRF_HEADER: self.csrf})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    def close(self) -> None:
        if self.sio.connected:
            self.sio.disconnect()


def probe(app: Flask, nb: str, n: int) -> None:
    """An event to the notebook's room, through the broadcaster the kernel manager uses."""
    broadcaster(app.extensions["socketio"])(nb, [{"type": "output", "probe": n, "text": ""}])


def wait_until(pred: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return bool(pred())


def probes(login: Login, n: int) -> int:
    return len(login.got("event", lambda d: d.get("probe") == n))


def test_logout_disconnects_the_sockets_of_that_login(mu_app: Flask, served_url: str) -> None:
    w = build_world(mu_app.extensions["store"])
    vera, other_vera, eddie = Login(served_url, "vera"), Login(served_url, "vera"), Login(served_url, "eddie")
    try:
        for c in (vera, other_vera, eddie):
            c.join(w.nb)
        probe(mu_app, w.nb, 1)
        assert wait_until(lambda: all(probes(c, 1) == 1 for c in (vera, other_vera, eddie)))

        assert vera.api("POST", "/api/logout") == 204
        assert wait_until(lambda: not vera.sio.connected), "the logged-out socket is still connected"
        probe(mu_app, w.nb, 2)
        assert wait_until(lambda: probes(eddie, 2) == 1 and probes(other_vera, 2) == 1)
        time.sleep(0.3)
        assert probes(vera, 2) == 0  # only that login: vera's other login still watches
    finally:
        for c in (vera, other_vera, eddie):
            c.close()


def test_removing_a_notebook_share_takes_the_socket_out_of_the_room(mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    w = build_world(store)
    alice = Login(served_url, "alice")
    mallory_id = store.get_user_by_name("mallory").id
    share = store.set_share(mallory_id, "viewer", notebook_id=w.nb)
    mallory, eddie = Login(served_url, "mallory"), Login(served_url, "eddie")
    try:
        mallory.join(w.nb)
        eddie.join(w.nb)
        assert alice.api("DELETE", f"/api/notebooks/{w.nb}/shares/{share.id}") == 204
        assert wait_until(lambda: mallory.got("revoked") == [{"notebook_id": w.nb}]), mallory.events
        probe(mu_app, w.nb, 3)
        assert wait_until(lambda: probes(eddie, 3) == 1)
        time.sleep(0.3)
        assert probes(mallory, 3) == 0
        assert mallory.sio.connected  # only the room is gone, not the socket
        ack = mallory.sio.call("command", {"type": "join", "notebook_id": w.nb}, timeout=30)
        assert not ack["ok"] and ack["status"] == 404, ack  # and it cannot join again
    finally:
        for c in (alice, mallory, eddie):
            c.close()


def test_removing_a_folder_share_takes_the_socket_out_unless_another_share_allows(
        mu_app: Flask, served_url: str) -> None:
    store = mu_app.extensions["store"]
    w = build_world(store)
    alice = Login(served_url, "alice")
    users = {u.username: u.id for u in store.list_users()}
    # eddie also holds a share on the notebook itself; vera only the folder's.
    store.set_share(users["eddie"], "viewer", notebook_id=w.nb)
    folder_shares = {s.user_id: s.id for s in store.list_shares(folder_path=w.folder)}
    vera, eddie = Login(served_url, "vera"), Login(served_url, "eddie")
    try:
        vera.join(w.nb)
        eddie.join(w.nb)
        for name in ("vera", "eddie"):
            assert alice.api("DELETE", f"/api/folders/shares/{folder_shares[users[name]]}") == 204
        assert wait_until(lambda: vera.got("revoked") == [{"notebook_id": w.nb}]), vera.events
        probe(mu_app, w.nb, 4)
        assert wait_until(lambda: probes(eddie, 4) == 1)  # still a viewer through the notebook's share
        time.sleep(0.3)
        assert probes(vera, 4) == 0 and eddie.got("revoked") == []
    finally:
        for c in (alice, vera, eddie):
            c.close()


def test_a_command_without_an_object_gets_an_error_ack(mu_app: Flask, served_url: str) -> None:
    vera = Login(served_url, "vera")
    try:
        for args in ((), ("run_cell",), (None,), ([1, 2],)):
            ack = vera.sio.call("command", *args, timeout=30)
            assert ack == {"ok": False, "status": 400, "error": ack["error"]}, (args, ack)
        assert vera.sio.connected
    finally:
        vera.close()
