"""Fixtures for the live session tests: a real server on 127.0.0.1, Socket.IO clients over websocket.

The server runs in the test process (tests/support/live_server.py), so a test can reach its store
and kernel manager; its kernels are real child processes running the real engine plus scripted
cells (tests/support/scripted_engine.py).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.clients import Viewer
from tests.support.live_server import REAL_KERNEL, LiveServer


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(str(tmp_path_factory.mktemp("sessions-data")))
    try:
        yield live
    finally:
        live.close()


def _viewers(server: LiveServer) -> Iterator[Callable[..., Viewer]]:
    """make(user=None) -> a Socket.IO viewer of this server; all are closed afterwards."""
    made: list[Viewer] = []

    def make(user: str | None = None) -> Viewer:
        v = Viewer(server.url, user)
        made.append(v)
        return v

    yield make
    for v in made:
        try:
            v.close()
        except Exception:  # a viewer whose server already went is closed enough
            pass


@pytest.fixture
def viewer(server: LiveServer) -> Iterator[Callable[..., Viewer]]:
    yield from _viewers(server)


# ---------------------------------------------------------------- Ray (one cluster per test session)


@pytest.fixture(scope="session")
def ray_server(ray_head: Any) -> Iterator[LiveServer]:
    # The server shares the head's data dir, so its kernels find that head as their embedded
    # one (loopback addressing, as in production); the fixture, not the server, stops it.
    # RAY_CLUSTERS=shared: its sessions run on that one head instead of a head each (the walls'
    # tests, the demo's and tests/sandbox/test_walls_ray_sessions.py cover the per-session default).
    live = LiveServer(ray_head.data_dir, kernel_module=REAL_KERNEL, RAY_HEAD_OWNER=False, RAY_CLUSTERS="shared")
    try:
        yield live
    finally:
        live.close()


@pytest.fixture
def ray_viewer(ray_server: LiveServer) -> Iterator[Callable[..., Viewer]]:
    yield from _viewers(ray_server)


@pytest.fixture(scope="session")
def mnist_dir(ray_head: Any) -> str:
    from pathlib import Path

    from console.demo.datasets import write_mnist

    # In the lake of the server's data dir: kernels run sandboxed with a private /tmp, where a
    # pytest temp folder would not exist, and MLSQL may read the lake.
    path = Path(ray_head.data_dir) / "lake" / "mnist-data" / "mnist"
    write_mnist(str(path), synthetic=True, rows=2000, partitions=2)
    return str(path)
