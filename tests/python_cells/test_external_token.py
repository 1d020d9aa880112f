"""An existing cluster that runs Ray's token authentication (CONSOLE_RAY_AUTH_TOKEN_FILE).

The cluster is one `ray start --head` on 127.0.0.1 with RAY_AUTH_MODE=token, as a team would run
it (docker/compose.yaml does). A cell reaches it over both address forms when the server is given
the token's file, and is refused without it; the kernel never sees the file's path.
"""
from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.cluster.head import ClusterInfo, short_temp_dir, start_head
from console.cluster.procs import free_port, stop_process_group
from console.config import load_config
from console.kernel.job import PythonJob

pytestmark = pytest.mark.slow  # a Ray head of its own and a driver per case: about 40 s

CELL = '''
import ray
from pyjava.api.mlsql import RayContext

ray_context = RayContext.connect(globals(), "127.0.0.1:10001")  # as the seed does

@ray.remote(num_cpus=1)
def square(x):
    return x * x

ray_context.build_result([{"v": v} for v in ray.get([square.remote(i) for i in range(4)])])
'''


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ClusterInfo, Path]]:
    base = tmp_path_factory.mktemp("tokenray")
    token = secrets.token_hex(32)
    token_file = base / "ray-token"
    token_file.write_text(token + "\n")
    head = start_head(short_temp_dir(base / "head"), num_cpus=1, client_port=free_port(), auth_token=token)
    try:
        yield head, token_file
    finally:
        if head.pid:
            stop_process_group(head.pid, grace=3.0)


def run_cell(tmp_path: Path, address: str, token_file: Path | None) -> tuple[Any, list[Any]]:
    from console.kernel.python_runtime import PythonRuntime

    settings = {"DATA_DIR": str(tmp_path / "data"), "RAY_ADDRESS": address}
    if token_file is not None:
        settings["RAY_AUTH_TOKEN_FILE"] = str(token_file)
    events: list[Any] = []
    runtime = PythonRuntime(load_config(settings), events.append)
    try:
        # A one-node cluster on loopback: its drivers keep Ray's loopback addressing (the kernel
        # drops it for an external cluster unless the cell's env names it).
        return runtime.run(PythonJob(code=CELL, conf={}, code_line=1,
                                     env={"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"})), events
    finally:
        runtime.shutdown()


@pytest.mark.parametrize("form", [pytest.param("ray_client", marks=pytest.mark.ray_client), "gcs"])
def test_a_cell_reaches_a_token_cluster_with_the_token_file(guarded: tuple[ClusterInfo, Path], tmp_path: Path,
                                                            form: str) -> None:
    head, token_file = guarded
    address = f"ray://{head.client_address}" if form == "ray_client" else head.address
    out, _ = run_cell(tmp_path, address, token_file)
    assert sorted(out.column("v").to_pylist()) == [0, 1, 4, 9]


@pytest.mark.ray_client
def test_without_the_token_the_cluster_refuses_the_cell(guarded: tuple[ClusterInfo, Path], tmp_path: Path) -> None:
    head, _ = guarded
    with pytest.raises(Exception) as failed:
        run_cell(tmp_path, f"ray://{head.client_address}", None)
    assert "CONSOLE_RAY_AUTH_TOKEN_FILE" in str(failed.value), str(failed.value)[-2000:]


def test_the_token_hint_comes_only_when_the_cluster_never_answered() -> None:
    """Ray's words (2.60) for a cluster that never answers the driver, over each address form, and
    a failure of this machine's own node (the z1 run), which the hint sent looking at the token."""
    from console.worker.cell import unanswered

    assert unanswered(ConnectionError("ray client connection timeout"))
    assert unanswered(ConnectionError("Failed to connect to Ray cluster at 127.0.0.1:48171"))
    assert not unanswered(ConnectionError("No node info found matching attributes: ''"))


def test_the_kernel_gets_the_token_not_the_file(guarded: tuple[ClusterInfo, Path], tmp_path: Path) -> None:
    from console.server.sessions.kernel_process import kernel_config

    head, token_file = guarded
    cfg = load_config({"DATA_DIR": str(tmp_path / "data"), "RAY_ADDRESS": head.address,
                       "RAY_AUTH_TOKEN_FILE": str(token_file)})
    assert json.loads(kernel_config(cfg))["RAY_AUTH_TOKEN_FILE"] is None


def test_an_unreadable_token_file_is_named(tmp_path: Path) -> None:
    from console.cluster.guard import external_token

    missing = tmp_path / "nope"
    with pytest.raises(RuntimeError, match="CONSOLE_RAY_AUTH_TOKEN_FILE: cannot read .*nope"):
        external_token({"RAY_ADDRESS": "127.0.0.1:6379", "RAY_AUTH_TOKEN_FILE": str(missing)})
