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


# ---------------------------------------------------------------- Ray (one cluster per test session)


@pytest.fixture(scope="session")
def ray_head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    """The test session's one embedded Ray head, through the runtime's cluster module: (info, data dir).

    When tests/runtime already started its head in this session (its data dir is rt-data*
    under the session's base temp dir), that head is reused; otherwise one is started here.
    """
    from console.config import load_config
    from console.runtime.cluster import RayCluster, free_port

    for state in sorted(tmp_path_factory.getbasetemp().glob("rt-data*/ray")):
        info = RayCluster({"DATA_DIR": str(state.parent)}).running()
        if info is not None:
            print(f"\n[sessions] reusing the runtime tests' Ray head at {info.address}")
            yield info, str(state.parent)
            return
    data_dir = str(tmp_path_factory.mktemp("sessions-ray"))
    cluster = RayCluster(load_config({"DATA_DIR": data_dir, "RAY_NUM_CPUS": 2, "RAY_CLIENT_PORT": free_port()}))
    cluster.own()
    info = cluster.ensure()
    try:
        yield info, data_dir
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def ray_server(ray_head: tuple[Any, str]) -> Iterator[Server]:
    # The server shares the head's data dir, so its kernels find that head as their embedded
    # one (loopback addressing, as in production); the fixture, not the server, stops it.
    live = LiveServer(ray_head[1], RAY_HEAD_OWNER=False)
    try:
        yield live.server
    finally:
        live.close()


@pytest.fixture
def ray_viewer(ray_server: Server) -> Iterator[Callable[..., Viewer]]:
    made: list[Viewer] = []

    def make(user: str | None = None) -> Viewer:
        v = Viewer(ray_server.url, user)
        made.append(v)
        return v

    yield make
    for v in made:
        try:
            v.close()
        except Exception:  # noqa: BLE001
            pass


@pytest.fixture(scope="session")
def mnist_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    from console.runtime.datasets import write_mnist

    path = tmp_path_factory.mktemp("mnist") / "mnist"
    write_mnist(str(path), synthetic=True, rows=2000, partitions=2)
    return str(path)
