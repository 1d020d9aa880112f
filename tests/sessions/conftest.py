"""Fixtures for the session tests: a real server on 127.0.0.1, Socket.IO clients over websocket.

The server runs in a thread of the test process (so `auth.current_user` can be swapped for a
header-based test identity until login exists); its kernels are real child processes running
the real engine plus scripted cells (scripted_engine.py).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from session_clients import LiveServer, Server, Viewer


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    live = LiveServer(str(tmp_path_factory.mktemp("sessions-data")))
    try:
        yield live.server
    finally:
        live.close()


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
