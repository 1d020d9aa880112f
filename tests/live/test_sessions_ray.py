"""Live sessions with real Ray and TensorFlow: actor output, interrupt in model.fit, the seed notebook.

One Ray head for the test session (`ray_head` in tests/conftest.py); the server runs on its data
dir, so its kernels find it as their embedded head, and the cells' "127.0.0.1:10001" reaches it.
"""
from __future__ import annotations

import time
from typing import Any

import pytest

from tests.support.clients import join
from tests.support.live_server import LiveServer as Server
from tests.support.procs import host_processes, running

BURST_CELL = """--%python
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Printer:
    def burst(self, name, n):
        for i in range(1, n + 1):
            print(f"{name} line {i}")
        return n

actors = [Printer.remote(), Printer.remote()]
print(ray.get([a.burst.remote(name, 5000) for a, name in zip(actors, ["A", "B"])]))
"""

FIT_CELL = """--%python
import numpy as np
from tensorflow.keras import layers, models
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), None)
x = np.random.rand(4000, 8).astype("float32")
y = x.sum(axis=1)
model = models.Sequential([layers.Dense(16, activation="relu", input_shape=(8,)), layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, epochs=100000, batch_size=16)
"""


def run_done(server: Server, viewer: Any, cell: str) -> tuple[Any, str]:
    """A viewer of a new notebook of one Python cell, and the id of the cell's run, which ended done."""
    nb = server.notebook(cell, kind="python")
    v = viewer()
    join(v, nb)
    run_id = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    status = v.wait_status(run_id, "done", "error", "interrupted", timeout=300)
    assert status["status"] == "done", [e for e in v.events if e["type"] == "error"]
    return v, run_id


def test_burst_from_two_ray_actors_is_complete_and_in_order(ray_server: Server, ray_viewer: Any) -> None:
    v, run_id = run_done(ray_server, ray_viewer, BURST_CELL)
    chunks = v.outputs(run_id)
    assert [c["seq"] for c in chunks] == list(range(1, len(chunks) + 1))
    by_name: dict[str, list[str]] = {}
    sources: dict[str, set[str]] = {}
    for c in chunks:
        for line in c["text"].splitlines():
            if " line " in line:
                name = line.split()[0]
                by_name.setdefault(name, []).append(line)
                sources.setdefault(name, set()).add(c["source"])
    for name in ("A", "B"):
        assert by_name[name] == [f"{name} line {i}" for i in range(1, 5001)]
        assert len(sources[name]) == 1 and "Printer" in next(iter(sources[name]))
    assert sources["A"] != sources["B"]  # each actor keeps its own tag


PIECES_CELL = """--%python
import os, time, ray
from pyjava.api.mlsql import RayContext
from console.actors.capture import LINE_START, LINE_END
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Printer:
    def cut(self):
        print("B line 3161", flush=True)
        time.sleep(1.0)  # Ray's log monitor has the file open
        # What a page boundary of the file does to one write: the first bytes are at the end of
        # the file, as a line, while the rest is not there yet; the log monitor reads them so.
        os.write(1, (LINE_START + "B ").encode())
        time.sleep(1.0)
        os.write(1, ("line 3162" + LINE_END + "\\n").encode())
        os.write(1, b"plain from C\\n")  # no marks: shown as Ray forwards it
        print("B line 3163", flush=True)
        return "cut"

print(ray.get(Printer.remote().cut.remote()))
"""


def test_an_actor_line_read_while_it_was_written_is_shown_whole(ray_server: Server, ray_viewer: Any) -> None:
    v, run_id = run_done(ray_server, ray_viewer, PIECES_CELL)
    lines = [(c["source"], line) for c in v.outputs(run_id) for line in c["text"].splitlines()]
    actor = [line for source, line in lines if "Printer" in source]
    assert actor == ["B line 3161", "B line 3162", "plain from C", "B line 3163"], lines


WIDE_CELL = """--%python
import os, time, ray
from pyjava.api.mlsql import RayContext
from console.actors.capture import PAGE, page_safe
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

def two_bytes_before_a_page():
    # a plain line that leaves the file two bytes before a page boundary: the next line's mark
    # fills one, and its first character would straddle the boundary
    pad = (PAGE - 3 - os.fstat(1).st_size) % PAGE
    os.write(1, b"y" * (pad + PAGE) + b"\\n")

@ray.remote
class Printer:
    def wide(self):
        two_bytes_before_a_page()
        print("\u6570\u636e " * 3000, flush=True)  # as any actor prints
        data = open("/proc/self/fd/1", "rb").read()
        straddling = [i for i in range(0, len(data), PAGE) if 0x80 <= data[i] < 0xC0]
        time.sleep(1.0)  # Ray's log monitor has read the file up to here
        two_bytes_before_a_page()
        # The page cache shows a write in progress a page at a time: here the log monitor reads
        # the line's first bytes, up to the boundary, a second before the rest.
        framed = page_safe("\u5bbd " * 2000, os.fstat(1).st_size).encode()
        cut = PAGE - os.fstat(1).st_size % PAGE
        os.write(1, framed[:cut])
        time.sleep(1.0)
        os.write(1, framed[cut:])
        return straddling

print("straddling:", ray.get(Printer.remote().wide.remote()))
"""


def test_an_actor_line_of_wide_characters_cut_at_a_page_boundary_arrives_whole(
        ray_server: Server, ray_viewer: Any) -> None:
    """Chinese printed by an actor reached the cell with replacement characters where a page ended."""
    v, run_id = run_done(ray_server, ray_viewer, WIDE_CELL)
    chunks = v.outputs(run_id)
    assert "straddling: []\n" in [c["text"] for c in chunks if c["source"] == "driver"]
    actor = "".join(c["text"] for c in chunks if "Printer" in c["source"])  # a long line comes in chunks
    wide = [line for line in actor.splitlines() if not line.startswith("y")]
    assert wide == ["\u6570\u636e " * 3000, "\u5bbd " * 2000], [line[:40] for line in wide]


def test_interrupt_during_model_fit(ray_server: Server, ray_viewer: Any) -> None:
    nb = ray_server.notebook(("python", FIT_CELL), ("mlsql", "select 1 as still_here as t;"))
    v = ray_viewer()
    join(v, nb)
    run_id = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    v.wait_for(lambda e: e.get("run_id") == run_id and (
        e["type"] == "metrics" or (e["type"] == "output" and "Epoch" in e["text"])), timeout=180)
    assert v.command("interrupt", notebook_id=nb.id)["interrupted"] == run_id
    ended = v.wait_status(run_id, "interrupted", "error", "done", timeout=60)
    assert ended["status"] == "interrupted", "\n".join(
        repr(e) for e in [e for e in v.events if e["type"] in ("error", "output")][-5:])
    # The kernel and its session live on.
    after = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[1].id)["run_ids"][0]
    assert v.wait_status(after, "done", "error", timeout=60)["status"] == "done"


@pytest.mark.slow
def test_seed_notebook_streams_both_actors_metrics_and_the_final_table(
        ray_server: Server, ray_viewer: Any, mnist_dir: str) -> None:
    from console.demo import seed_notebook

    cells = seed_notebook()["cells"]
    cells[0] = {**cells[0], "source": cells[0]["source"].replace("/tmp/mnist", mnist_dir)}
    user = ray_server.store.ensure_user("admin")
    nb = ray_server.store.create_notebook(f"seed-{time.monotonic_ns()}", owner_id=user.id, cells=cells)
    v = ray_viewer()
    join(v, nb)
    ids = v.command("run_all", notebook_id=nb.id)["run_ids"]
    assert len(ids) == 4
    for run_id in ids:
        status = v.wait_status(run_id, "done", "error", "interrupted", "cancelled", timeout=1200)
        assert status["status"] == "done", [e for e in v.events if e["type"] == "error"]
    train = ids[2]
    actor_sources = {c["source"] for c in v.outputs(train) if c["source"].startswith("Network")}
    assert len(actor_sources) == 2, {c["source"] for c in v.outputs(train)}
    metrics = [e for e in v.events if e["type"] == "metrics" and e["run_id"] == train]
    assert {m["source"] for m in metrics} >= actor_sources or len({m["source"] for m in metrics}) >= 2
    assert all("loss" in m["values"] for m in metrics)
    result = v.wait_for(lambda e: e["type"] == "result" and e["run_id"] == train)
    assert [c["name"] for c in result["columns"]] == ["start", "offset", "value"]
    assert result["total_rows"] > 0
    # A reloaded page gets the same, from the store.
    later = ray_viewer()
    join(later, nb)
    later.wait_for(lambda e: e["type"] == "result" and e["run_id"] == train)
    assert len([e for e in later.events if e["type"] == "metrics" and e["run_id"] == train]) == len(metrics)


def test_kill_9_of_the_kernel_leaves_no_cell_worker_behind(ray_server: Server, ray_viewer: Any) -> None:
    import os
    import signal

    cell = "--%python\nimport os, time\nprint('worker', os.getpid(), flush=True)\ntime.sleep(300)\n"
    nb = ray_server.notebook(("python", cell))
    v = ray_viewer()
    join(v, nb)
    run_id = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    line = v.wait_for(lambda e: e["type"] == "output" and e["text"].startswith("worker "), timeout=120)
    kernel = ray_server.manager.session(ray_server.store.get_user_by_name("admin").id, nb.id).kernel
    # The cell printed its pid in the sandbox's PID namespace: the host's pid is looked up, under the kernel.
    found = host_processes({int(line["text"].split()[1])}, under=kernel.pid)
    assert len(found) == 1, f"the cell worker is found on this machine: {found}"
    worker = found.pop()
    os.kill(kernel.pid, signal.SIGKILL)
    dead = v.wait_for(lambda e: e["type"] == "kernel_status" and e["notebook_id"] == nb.id and e["status"] == "dead")
    assert "SIGKILL" in dead["reason"]
    assert v.wait_status(run_id, "error")["status"] == "error"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and running(worker):
        time.sleep(0.2)
    assert not running(worker), f"the cell worker {worker} outlived its kernel"
