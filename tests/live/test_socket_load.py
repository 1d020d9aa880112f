"""Websockets cannot starve the production server (gunicorn in a child process, login mode).

Each websocket holds one of the gunicorn worker's threads for its whole life; once 64 of them
(cookie-less ones included) stopped every HTTP request. Now a socket from nobody is refused
before the upgrade, and logged-in sockets may take only the threads beyond a reserve for HTTP.
No timing is asserted: the HTTP request must simply be answered.
"""
from __future__ import annotations

import hashlib
import secrets
import threading
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import websocket

from console.config import load_config
from console.server.auth import SESSION_COOKIE
from console.store import Store
from tests.support.live_server import ServerProcess, start_server

pytestmark = pytest.mark.timeout(180)

THREADS = 64  # the old default, under which 64 sockets stopped the server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data = Path(tmp_path_factory.mktemp("sockload")) / "data"
    srv = start_server(data, {"CONSOLE_SINGLE_USER": "false"}, threads=THREADS)
    yield srv
    srv.stop()


def cookies(server: ServerProcess, count: int) -> list[str]:
    """Session cookies of `count` logins, written into the server's store (no password hashing)."""
    store = Store(load_config({"DATA_DIR": str(server.data_dir)}).database_url, run_migrations=False)
    try:
        user = store.create_user(f"u{secrets.token_hex(4)}", None)
        expires = datetime.now(timezone.utc) + timedelta(days=1)
        out = []
        for _ in range(count):
            token = secrets.token_urlsafe(32)
            store.create_login_session(hashlib.sha256(token.encode()).hexdigest(), user.id,
                                       secrets.token_urlsafe(16), expires, "127.0.0.1")
            out.append(f"{SESSION_COOKIE}={token}")
        return out
    finally:
        store.close()


def ws_url(server: ServerProcess) -> str:
    return server.url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"


def open_many(server: ServerProcess, headers: list[list[str]]) -> tuple[list[Any], list[int]]:
    """Websocket upgrades in parallel, held open: (the open ones, the refused ones' HTTP statuses)."""
    held: list[Any] = []
    refused: list[int] = []
    lock = threading.Lock()

    def attempt(h: list[str]) -> None:
        try:
            ws = websocket.create_connection(ws_url(server), header=h, timeout=20)
            with lock:
                held.append(ws)
        except websocket.WebSocketBadStatusException as exc:
            with lock:
                refused.append(exc.status_code)

    threads = [threading.Thread(target=attempt, args=(h,)) for h in headers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return held, refused


def health(server: ServerProcess) -> int:
    with urllib.request.urlopen(server.url + "/api/health", timeout=20) as resp:
        return int(resp.status)


def test_an_anonymous_websocket_is_refused_before_the_upgrade(server: ServerProcess) -> None:
    held, refused = open_many(server, [[] for _ in range(80)])
    try:
        assert held == [] and refused == [401] * 80
        assert health(server) == 200
    finally:
        for ws in held:
            ws.close()


def test_http_gets_through_with_80_open_logged_in_sockets(server: ServerProcess) -> None:
    held, refused = open_many(server, [[f"Cookie: {c}"] for c in cookies(server, 80)])
    try:
        assert len(held) + len(refused) == 80
        assert held, "no logged-in socket was accepted"
        assert set(refused) <= {503}, refused  # beyond the sockets' share of threads: try again later
        assert all(ws.connected for ws in held)
        assert health(server) == 200  # a thread was left for HTTP
    finally:
        for ws in held:
            ws.close()
    # The threads come back as the sockets close: sockets are accepted again.
    deadline = time.monotonic() + 20
    while True:
        again, refused_again = open_many(server, [[f"Cookie: {c}"] for c in cookies(server, 4)])
        for ws in again:
            ws.close()
        if len(again) == 4 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert len(again) == 4 and refused_again == []
