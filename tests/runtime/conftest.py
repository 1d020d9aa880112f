"""Runtime fixtures: ONE embedded Ray head for the whole test session, and a shared runtime.

The head gets a free Ray Client port (10001 may be taken by another cluster on this shared
machine); cells that connect to "127.0.0.1:10001" still reach it, because a loopback address
means "the notebook's own cluster".
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from console.config import load_config
from console.runtime.cluster import RayCluster, free_port


@pytest.fixture(scope="session")
def ray_cfg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    data_dir = tmp_path_factory.mktemp("rt-data")
    cfg = load_config({"DATA_DIR": str(data_dir), "RAY_NUM_CPUS": 2, "RAY_CLIENT_PORT": free_port()})
    cluster = RayCluster(cfg)
    cluster.own()  # runtimes of single tests release it; only this fixture stops it
    cluster.ensure()
    yield cfg
    cluster.stop(grace=3.0)


class Events(list):
    def text(self, source: str | None = None) -> str:
        return "".join(e.text for e in self if e.type == "output" and (source is None or e.source == source))

    def metrics(self) -> list[Any]:
        return [e for e in self if e.type == "metrics"]


@pytest.fixture(scope="session")
def _runtime_and_sink(ray_cfg: Any) -> Iterator[tuple[Any, list]]:
    from console.runtime import PythonRuntime

    sink: list = [Events()]
    runtime = PythonRuntime(ray_cfg, lambda e: sink[0].append(e))
    yield runtime, sink
    runtime.shutdown()


@pytest.fixture
def runtime(_runtime_and_sink: tuple[Any, list]) -> Any:
    """The session's runtime (its worker stays warm between tests); events go to `events`."""
    runtime, sink = _runtime_and_sink
    sink[0] = Events()
    return runtime


@pytest.fixture
def events(_runtime_and_sink: tuple[Any, list], runtime: Any) -> Events:
    return _runtime_and_sink[1][0]


@pytest.fixture(scope="session")
def mnist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from console.runtime.datasets import write_mnist

    path = tmp_path_factory.mktemp("mnist")
    write_mnist(str(path), synthetic=True, rows=3000, partitions=2)
    return path
