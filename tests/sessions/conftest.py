"""Fixtures for the session tests: a real server on 127.0.0.1, Socket.IO clients over websocket.

The server runs in a thread of the test process (so `auth.current_user` can be swapped for a
header-based test identity until login exists); its kernels are real child processes running
the real engine plus scripted cells (scripted_engine.py).
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from session_clients import TEST_USER_HEADER, Server, Viewer, free_port, pythonpath


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from flask import request
    from werkzeug.serving import make_server

    from console.web import auth, create_app

    env = {"CONSOLE_KERNEL_ENGINE": "scripted_engine:ScriptedSession", "PYTHONPATH": pythonpath()}
    app = create_app({"DATA_DIR": str(tmp_path_factory.mktemp("sessions-data")), "TESTING": True,
                      "KERNEL_ENV": env})
    original = auth.current_user

    def test_user() -> Any:
        name = request.headers.get(TEST_USER_HEADER) if request else None
        if not name:
            return original()
        return app.extensions["store"].ensure_user(name)

    auth.current_user = test_user  # type: ignore[assignment]
    port = free_port()
    httpd = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(app, f"http://127.0.0.1:{port}")
    finally:
        app.extensions["sessions"].shutdown()
        httpd.shutdown()
        auth.current_user = original  # type: ignore[assignment]


@pytest.fixture
def viewer(server: Server) -> Iterator[Callable[..., Viewer]]:
    made: list[Viewer] = []

    def make(user: str | None = None) -> Viewer:
        v = Viewer(server.url, user)
        made.append(v)
        return v

    yield make
    for v in made:
        try:
            v.close()
        except Exception:  # noqa: BLE001
            pass
