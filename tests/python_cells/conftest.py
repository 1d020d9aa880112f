"""Runtime fixtures: the test session's one Ray head (tests/conftest.py) and a shared runtime."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest



@pytest.fixture(scope="session")
def ray_cfg(ray_head: Any) -> Any:
    """Settings whose data dir holds the test session's Ray head (tests/conftest.py)."""
    return ray_head.cfg


class Events(list):
    def text(self, source: str | None = None) -> str:
        return "".join(e.text for e in self if e.type == "output" and (source is None or e.source == source))

    def metrics(self) -> list[Any]:
        return [e for e in self if e.type == "metrics"]


@pytest.fixture(scope="session")
def _runtime_and_sink(ray_cfg: Any) -> Iterator[tuple[Any, list]]:
    from console.kernel.python_runtime import PythonRuntime

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
    from console.demo.datasets import write_mnist

    path = tmp_path_factory.mktemp("mnist")
    write_mnist(str(path), synthetic=True, rows=3000, partitions=2)
    return path
