"""Helpers of the security tests: multi-user apps and logged-in clients; `Served` (an app behind a
real server) is the one live-server harness's (tests/support/live_server.py)."""
from __future__ import annotations
import functools
from typing import Any
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.security import generate_password_hash
from console.config import Config
from console.server.auth import CSRF_HEADER
from tests.support.live_server import Served

__all__ = ["PASSWORD", "READERS", "USERS", "Served", "login", "make_app", "socket_as"]


PASSWORD = "correct horse battery"


USERS = ("alice", "vera", "rudy", "eddie", "mallory")  # owner, viewer, runner, editor, no role
READERS = ("rita",)  # site role reader (console/roles.py); the others are members


@functools.cache
def _password_hash() -> str:
    # PASSWORD hashed once per test process, with scrypt at a lower work factor (N = 2^10) than
    # werkzeug's default that hash_password uses (2^15: 0.1 s per hash or check here). The
    # security tests log in some hundreds of times and make six users per app, and each login
    # checks the hash for real; what a password is stored as is hash_password's (test_access_cli.py).
    return generate_password_hash(PASSWORD, method="scrypt:1024:8:1")


def make_app(cfg: Config, **settings: Any) -> Flask:
    from console.server import create_app

    app = create_app({**cfg, "TESTING": True, "SINGLE_USER": False, **settings})
    store = app.extensions["store"]
    for name in USERS:
        store.create_user(name, _password_hash())
    for name in READERS:
        store.create_user(name, _password_hash(), site_role="reader")
    return app


def login(app: Flask, name: str, password: str = PASSWORD, **kw: Any) -> FlaskClient:
    client = app.test_client(**kw)
    r = client.post("/api/login", json={"username": name, "password": password})
    assert r.status_code == 200, r.json
    client.environ_base[f"HTTP_{CSRF_HEADER.upper().replace('-', '_')}"] = r.json["csrf_token"]
    client.csrf_token = r.json["csrf_token"]  # type: ignore[attr-defined]
    return client


def socket_as(url: str, name: str, password: str = PASSWORD) -> Any:
    """A python-socketio client of the server at `url`, logged in as `name` through POST /api/login
    like the page: the session cookie on the handshake, the CSRF token as the auth payload."""
    import json
    import urllib.request

    from tests.support.clients import ordered_client

    req = urllib.request.Request(f"{url}/api/login", method="POST", headers={"Content-Type": "application/json"},
                                 data=json.dumps({"username": name, "password": password}).encode())
    with urllib.request.urlopen(req, timeout=30) as resp:
        csrf = json.loads(resp.read())["csrf_token"]
        cookies = "; ".join(c.split(";", 1)[0] for c in resp.headers.get_all("Set-Cookie"))
    sio = ordered_client()
    sio.connect(url, transports=["websocket"], headers={"Cookie": cookies}, auth={"csrf": csrf}, wait_timeout=10)
    return sio
