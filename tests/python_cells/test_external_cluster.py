"""The seed notebook's cell, unchanged, on a user's own Ray cluster (CONSOLE_RAY_ADDRESS), both forms.

The cluster is what a user would run: `ray start --head` plus one `ray start --address=…` node on
127.0.0.1, one CPU each, their own free ports and temp dirs, stopped by the PIDs we started
(never `ray stop`). Nothing embedded is started.

The nodes must not be able to import this project, so that `shipModules=auto` is what makes
`pyjava` and `console` reach the actors. The venv has the project installed editable: a `.pth`
file in its site-packages installs a finder that maps both names to this checkout, so any
interpreter that processes that folder as a site dir imports them. The nodes therefore run
from a bare interpreter: a `venv --without-pip` of the same base Python (0.2 s to make) whose
only `.pth` lists the main venv's site-packages as a plain path. A plain path line adds the
folder to sys.path without processing the `.pth` files inside it, so ray, pyarrow and
TensorFlow import and the editable finder never installs. The nodes also start with
PYTHONPATH cleared and a working dir outside the checkout; the first test checks the result.

The last test serves the seed notebook from a real server whose kernels run in the sandbox,
over the GCS address: there the server joins a zero-CPU node to the cluster inside the
sandbox (cluster/head.py says why), and stops it when it closes.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Iterator, NamedTuple

import pyarrow.parquet as pq
import pytest

from console.cluster.head import ClusterInfo, short_temp_dir, start_head
from console.cluster.procs import free_port, stop_process_group
from console.config import load_config
from console.kernel.job import PythonJob
from tests.python_cells.test_seed import PYTHON_ENV, SEED_CODE, SEED_CONF

pytestmark = pytest.mark.slow  # two Ray nodes, TensorFlow in their actors: about 2 minutes in all

# Where a remote task finds the shipped packages; also that it runs on both nodes.
WHERE = '''
import ray
from pyjava.api.mlsql import RayContext

ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote(num_cpus=1)
def where(_):
    import os, sys, time, console, pyjava
    time.sleep(0.5)  # keep this node's CPU busy, so the next task goes to the other node
    return ray.get_runtime_context().get_node_id(), pyjava.__file__, console.__file__, type(sys.stdout).__name__

found = ray.get([where.remote(i) for i in range(6)])
ray_context.build_result([{"node": n, "pyjava": p, "console": c, "stdout": o} for n, p, c, o in found])
'''


class External(NamedTuple):
    head: ClusterInfo
    python: str  # the nodes' interpreter
    env: dict[str, str]  # the nodes' environment additions


def bare_python(folder: Path) -> str:
    """An interpreter with the venv's packages but not the project (see the module docstring)."""
    subprocess.run([os.path.join(sys.base_prefix, "bin", "python3"), "-m", "venv", "--without-pip", str(folder)],
                   check=True, timeout=60)
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(subprocess.run([str(folder / "bin" / "python"), "-c", purelib], check=True, capture_output=True,
                               text=True, timeout=60).stdout.strip())
    (site / "console-venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return str(folder / "bin" / "python")


@pytest.fixture(scope="module")
def external(tmp_path_factory: pytest.TempPathFactory) -> Iterator[External]:
    base = tmp_path_factory.mktemp("extray")
    python = bare_python(base / "py")
    # Ray's multi-node addressing (a joining node is refused in loopback-only mode), and an
    # empty PYTHONPATH over whatever this process has (start_head starts from os.environ).
    env = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1", "PYTHONPATH": ""}
    head = node = None
    try:
        head = start_head(short_temp_dir(base / "head"), num_cpus=1, client_port=free_port(), env=env,
                          python=python)
        node = start_head(short_temp_dir(base / "node"), num_cpus=1, address=head.address, env=env,
                          python=python)
        yield External(head, python, env)
    finally:
        for started in (node, head):
            if started is not None and started.pid:
                stop_process_group(started.pid, grace=3.0)


@pytest.fixture
def runtime_on(tmp_path: Path) -> Iterator[Any]:
    """runtime_on(address) -> (a PythonRuntime with CONSOLE_RAY_ADDRESS=address, the events it emits)."""
    from console.kernel.python_runtime import PythonRuntime

    made: list[Any] = []

    def make(address: str) -> tuple[Any, list[Any]]:
        cfg = load_config({"DATA_DIR": str(tmp_path / "data"), "RAY_ADDRESS": address})
        events: list[Any] = []
        runtime = PythonRuntime(cfg, events.append)
        made.append(runtime)
        return runtime, events

    yield make
    for runtime in made:
        runtime.shutdown()
    assert not (tmp_path / "data" / "server" / "head.json").exists()  # nothing embedded was started


def test_nodes_cannot_import_the_project(external: External, tmp_path: Path) -> None:
    env = {**os.environ, **external.env}
    env.pop("PYTHONPATH")
    probe = subprocess.run([external.python, "-c", "import ray, pyarrow; import console"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert probe.returncode != 0 and "No module named 'console'" in probe.stderr, probe.stderr[-2000:]


def client_address(external: External) -> str:
    assert external.head.client_address
    return "ray://" + external.head.client_address


@pytest.mark.parametrize("form", [pytest.param("ray_client", marks=pytest.mark.ray_client), "gcs"])
def test_modules_are_shipped_to_both_nodes(external: External, runtime_on: Any, form: str) -> None:
    address = client_address(external) if form == "ray_client" else external.head.address
    runtime, _ = runtime_on(address)
    out = runtime.run(PythonJob(code=WHERE, conf={}, code_line=1)).to_pylist()
    assert len({row["node"] for row in out}) == 2, out  # six 1-CPU tasks: both nodes take some
    checkout = str(Path(__file__).resolve().parents[2])
    for row in out:  # shipped copies in Ray's runtime_resources, never this checkout
        assert "runtime_resources" in row["pyjava"] and not row["pyjava"].startswith(checkout), row
        assert "runtime_resources" in row["console"] and not row["console"].startswith(checkout), row
        assert row["stdout"] == "ActorStream", row  # the setup hook ran (Ray Client ignores the runtime_env key)


@pytest.mark.parametrize("form", [pytest.param("ray_client", marks=pytest.mark.ray_client), "gcs"])
def test_seed_cell_unchanged_on_an_external_cluster(external: External, runtime_on: Any, mnist_dir: Path,
                                                    form: str) -> None:
    address = client_address(external) if form == "ray_client" else external.head.address
    runtime, events = runtime_on(address)
    table = pq.read_table(mnist_dir)
    out = runtime.run(PythonJob(code=SEED_CODE, conf=dict(SEED_CONF), env={"PYTHON_ENV": PYTHON_ENV},
                                input_name="mnist", input_table=table, output_name="mnist_model", code_line=6))
    assert out.column_names == ["start", "offset", "value"] and out.num_rows > 3
    text = "".join(e.text for e in events if e.type == "output")
    assert "total workers 2\n" in "".join(e.text for e in events if e.type == "output" and e.source == "driver"), \
        text[-3000:]
    metrics = [e for e in events if e.type == "metrics"]
    sources = {m.source for m in metrics}
    assert len(sources) == 2 and all(s.startswith("Network pid=") for s in sources), (sources, text[-3000:])
    for s in sources:  # 1 + 6 fits per actor, each reported with loss and accuracy
        assert [m.step for m in metrics if m.source == s] == list(range(1, 8))


def test_seed_notebook_from_sandboxed_kernels_over_a_gcs_address(external: External, tmp_path: Path) -> None:
    from console.cluster import sandbox
    from console.cluster.procs import pid_alive
    from console.demo import seed_notebook
    from console.demo.datasets import write_mnist
    from tests.support.clients import Viewer, join
    from tests.support.live_server import REAL_KERNEL, LiveServer

    data_dir = tmp_path / "served"
    mnist = data_dir / "lake" / "mnist-data" / "mnist"  # kernels have a private /tmp: data in the lake
    write_mnist(str(mnist), synthetic=True, rows=2000, partitions=2)
    server = LiveServer(str(data_dir), kernel_module=REAL_KERNEL, RAY_ADDRESS=external.head.address)
    viewer = None
    try:
        assert sandbox.enabled(server.manager.cfg), "this test is about sandboxed kernels"
        cells = seed_notebook()["cells"]
        cells[0] = {**cells[0], "source": cells[0]["source"].replace("/tmp/mnist", str(mnist))}
        user = server.store.ensure_user("admin")
        nb = server.store.create_notebook("seed-external", owner_id=user.id, cells=cells)
        viewer = Viewer(server.url, None)
        join(viewer, nb)
        ids = viewer.command("run_all", notebook_id=nb.id)["run_ids"]
        for run_id in ids:
            status = viewer.wait_status(run_id, "done", "error", "interrupted", "cancelled", timeout=600)
            # A string, shown whole: pytest cuts the repr of a list to ~240 characters (a fresh-clone
            # run's failure lost the start of the error that way).
            assert status["status"] == "done", "\n".join(
                repr(e) for e in [e for e in viewer.events if e["type"] in ("error", "output")][-8:])
        train = ids[2]
        assert "total workers 2" in "".join(c["text"] for c in viewer.outputs(train) if c["source"] == "driver")
        assert len({c["source"] for c in viewer.outputs(train) if c["source"].startswith("Network")}) == 2
        record = json.loads((data_dir / "server" / "head.json").read_text())["info"]
        assert record["address"] == external.head.address and record["num_cpus"] == 0 and not record["embedded"]
        node_pid = record["pid"]
        assert pid_alive(node_pid)
    finally:
        if viewer is not None:
            viewer.close()
        server.close()
    assert not pid_alive(node_pid), "the server stops the node it joined to the cluster"
