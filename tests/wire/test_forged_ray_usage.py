"""A Ray usage report is untrusted: what a cell forges on its worker's socket or its kernel's pipe.

The running cell's Ray actors and CPUs travel worker -> kernel (cell_ray_usage) -> server
(run_ray_usage) -> room (ray_usage). A hostile member's real Python cell writes both channels
itself (forge_support.py opens the kernel's event pipe, unsandboxed; the worker's socket is the
last argument of its command line). What must hold: a report about someone else's run, with
made-up CPU figures, or in a flood is dropped or thinned; one past the lists' or strings' caps is
a protocol break that stops the channel's writer. The checks themselves also run without kernels.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.config import load_config
from console.ids import CellId, NotebookId, RunId
from console.kernel.session import Session
from console.server.sessions import ray_usage
from console.server.sessions.kernel_session import KernelSession, QueuedRun
from console.wire.codec import DecodeError
from console.wire.kernel import FROM_KERNEL, RunRayUsage
from console.wire.worker import RayActor, RayUsage
from forge_support import own_run_cell, run_all, wait_run
from tests.support.clients import Viewer, join
from tests.support.live_server import REAL_KERNEL, LiveServer

USAGE = {"actors_alive": 7, "actors": [{"class_name": "Forged", "state": "alive", "node": "10.0.0.1", "cpus": 1.0}]}


def _session_running(run_id: str = "r1") -> KernelSession:
    session = KernelSession(None, NotebookId("nb1"))
    session.current = QueuedRun(RunId(run_id), CellId("c1"), "", "python")
    return session


# ---------------------------------------------------------------- the checks, without kernels


def test_the_decoder_refuses_lists_and_strings_past_their_caps() -> None:
    actor = {"class_name": "A", "state": "alive"}
    with pytest.raises(DecodeError, match=r"usage\.actors: more than 20 items"):
        FROM_KERNEL.decode({"type": "run_ray_usage", "run_id": "r1", "usage": {"actors": [actor] * 21}})
    with pytest.raises(DecodeError, match=r"class_name: longer than 200 characters"):
        FROM_KERNEL.decode({"type": "run_ray_usage", "run_id": "r1",
                            "usage": {"actors": [dict(actor, class_name="x" * 201)]}})
    with pytest.raises(DecodeError, match=r"actors_alive: must be an integer within 0\.\.1000000000"):
        FROM_KERNEL.decode({"type": "run_ray_usage", "run_id": "r1", "usage": {"actors_alive": -1}})
    with pytest.raises(DecodeError, match=r"state: must be one of"):
        FROM_KERNEL.decode({"type": "run_ray_usage", "run_id": "r1", "usage": {"actors": [dict(actor, state="x")]}})
    ok = FROM_KERNEL.decode({"type": "run_ray_usage", "run_id": "r1", "usage": USAGE})
    assert isinstance(ok, RunRayUsage) and ok.usage.actors == [RayActor("Forged", "alive", "10.0.0.1", 1.0)]


def test_the_server_takes_a_report_only_for_the_current_run_with_real_cpu_figures_and_not_too_often() -> None:
    session = _session_running("r1")
    with pytest.raises(ray_usage.Refused, match="not executing"):
        ray_usage.accept(session, RunRayUsage(RunId("someone-elses"), RayUsage(actors_alive=1)))
    with pytest.raises(ray_usage.Refused, match="cpus_in_use"):
        ray_usage.accept(session, RunRayUsage(RunId("r1"), RayUsage(cpus_in_use=1e12)))
    with pytest.raises(ray_usage.Refused, match=r"actors\[0\]\.cpus"):
        ray_usage.accept(session, RunRayUsage(RunId("r1"), RayUsage(actors=[RayActor("A", "alive", cpus=-1.0)])))
    assert session.ray_usage is None
    first = ray_usage.accept(session, RunRayUsage(RunId("r1"), RayUsage(actors_alive=2, cpus_in_use=1.0)))
    assert first is not None and first.cell_id == "c1" and first.notebook_id == "nb1" and first.run_id == "r1"
    assert ray_usage.accept(session, RunRayUsage(RunId("r1"), RayUsage(actors_alive=3))) is None  # too soon
    summary = ray_usage.summary(session)
    assert summary is not None and summary["running"] and summary["actors_alive"] == 2
    assert summary["cpus_in_use"] == 1.0
    session.current = None
    assert ray_usage.summary(session)["running"] is False  # type: ignore[index]
    with pytest.raises(ray_usage.Refused):  # the run ended: nothing more about it is taken
        ray_usage.accept(session, RunRayUsage(RunId("r1"), RayUsage(actors_alive=9)))


# ---------------------------------------------------------------- a cell forging on its worker's socket

WORKER_SOCKET = """--%python
import json, os, time
_fd = int(open("/proc/self/cmdline", "rb").read().split(b"\\0")[-2])
actor = {"class_name": "A", "state": "alive", "node": "", "cpus": 0.0}
line = {"type": "cell_ray_usage", "job_id": __import__("sys").stdout.channel.job_id,
        "usage": {"actors": [actor] * 5000}}
os.write(_fd, json.dumps(line).encode() + b"\\n")
time.sleep(30)
"""


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Any]:
    s = Session(load_config({"DATA_DIR": str(tmp_path / "data"), "SANDBOX": "off"}), lambda _: None,
                session_id="ray-forger")
    yield s
    s.shutdown()


def test_an_oversized_report_on_the_worker_socket_stops_the_worker_with_the_reason(session: Any) -> None:
    out = session.run_cell(WORKER_SOCKET, kind="python")
    assert not out.ok and out.error.kind == "worker", out.error
    assert "broke the protocol" in out.error.message and "usage.actors: more than 20 items" in out.error.message, \
        out.error
    assert session.run_cell("--%python\nprint('a fresh worker')\n", kind="python").ok


# ---------------------------------------------------------------- a cell forging on its kernel's pipe


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Unsandboxed: under the walls a cell cannot open its kernel's pipe at all
    # (tests/wire/test_forged_kernel_events.py tries that); this is about what the server does.
    server = LiveServer(str(tmp_path_factory.mktemp("forged-ray") / "data"), kernel_module=REAL_KERNEL, SANDBOX="off")
    try:
        yield server
    finally:
        server.close()



def _start(live: LiveServer, nb: Any, user: Any, run_file: Path) -> str:
    (run_id,) = live.manager.run(user.id, nb.id, "all")
    run_file.write_text(run_id)
    return str(run_id)


@pytest.mark.slow
def test_forged_reports_on_the_kernel_pipe_are_dropped_capped_or_thinned(live: LiveServer, tmp_path: Path) -> None:
    bob = live.store.ensure_user("bob")
    bobs_nb = live.notebook(("python", "--%python\nprint('bob was here')\n"), owner="bob")
    (bobs,) = run_all(live, bobs_nb, bob)
    assert bobs.status == "done", bobs.error
    mallory = live.store.ensure_user("mallory")
    run_file = tmp_path / "run_id"
    made_up = dict(USAGE, cpus_in_use=1e12)
    body = f"""
forge({{"type": "run_ray_usage", "run_id": "{bobs.id}", "usage": {json.dumps(USAGE)}}},
      {{"type": "run_ray_usage", "run_id": own, "usage": {json.dumps(made_up)}}})
_started = time.monotonic()
for _ in range(300):
    forge({{"type": "run_ray_usage", "run_id": own, "usage": {json.dumps(USAGE)}}})
print("flood took %.2f s" % (time.monotonic() - _started))
time.sleep(0.5)
"""
    nb = live.notebook(own_run_cell(run_file, body), owner="mallory")
    watch_bob, watch_mallory = Viewer(live.url, "bob"), Viewer(live.url, "mallory")
    try:
        join(watch_bob, bobs_nb)
        join(watch_mallory, nb)
        run_id = _start(live, nb, mallory, run_file)
        attack = wait_run(live, run_id)
        assert attack.status == "done", attack.error
        watch_mallory.wait_status(run_id, "done")
        reports = [e for e in watch_mallory.events if e["type"] == "ray_usage"]
        assert not [e for e in watch_bob.events if e["type"] == "ray_usage"]
    finally:
        watch_bob.close()
        watch_mallory.close()
    session = live.manager.session(None, nb.id)
    # The flood of 300 became a few events, all about mallory's own run, none with made-up CPUs.
    assert 1 <= len(reports) <= 20, len(reports)
    assert all(e["run_id"] == run_id and e["usage"]["actors_alive"] == 7 for e in reports), reports[:3]
    assert all(e["usage"]["cpus_in_use"] == 0.0 for e in reports), reports[:3]
    assert session.ray_usage is not None and session.ray_usage.run_id == run_id
    assert session.dropped >= 2  # bob's run and the made-up figures
    assert live.manager.session(None, bobs_nb.id).ray_usage is None
    assert session.status == "idle", session.reason  # well-formed lies are dropped, not a protocol break


@pytest.mark.slow
def test_an_oversized_report_on_the_kernel_pipe_stops_the_kernel(live: LiveServer, tmp_path: Path) -> None:
    mallory = live.store.ensure_user("mallory")
    run_file = tmp_path / "run_id"
    big = {"actors": [{"class_name": "A" * 5000, "state": "alive"}]}
    body = f'forge({{"type": "run_ray_usage", "run_id": own, "usage": {json.dumps(big)}}})\ntime.sleep(30)\n'
    nb = live.notebook(own_run_cell(run_file, body), owner="mallory")
    run_id = _start(live, nb, mallory, run_file)
    attack = wait_run(live, run_id)
    session = live.manager.session(None, nb.id)
    assert attack.status == "error" and "broke the kernel protocol" in attack.error["message"], attack.error
    assert "class_name: longer than 200 characters" in session.reason, session.reason
    assert session.ray_usage is None
    deadline = time.monotonic() + 5
    while session.kernel is not None and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.mark.slow
def test_a_viewer_who_joins_while_the_cell_runs_gets_its_last_report(live: LiveServer, tmp_path: Path) -> None:
    """The report is not stored, but the session keeps the running cell's last one: a page opened
    (or reloaded) mid-run shows the actors at once instead of after the next report."""
    mallory = live.store.ensure_user("mallory")
    run_file = tmp_path / "run_id"
    body = f"""
forge({{"type": "run_ray_usage", "run_id": own, "usage": {json.dumps(USAGE)}}})
time.sleep(4)
"""
    nb = live.notebook(own_run_cell(run_file, body), owner="mallory")
    run_id = _start(live, nb, mallory, run_file)
    session = live.manager.session(None, nb.id)
    deadline = time.monotonic() + 60
    while session.ray_usage is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session.ray_usage is not None, "the report did not reach the server"
    late = Viewer(live.url, "mallory")
    try:
        join(late, nb)
        deadline = time.monotonic() + 10
        while not [e for e in late.events if e["type"] == "ray_usage"] and time.monotonic() < deadline:
            time.sleep(0.05)
        replayed = [e for e in late.events if e["type"] == "ray_usage"]
        assert replayed and replayed[0]["run_id"] == run_id and replayed[0]["usage"]["actors_alive"] == 7
        assert wait_run(live, run_id).status == "done"
    finally:
        late.close()
    after = Viewer(live.url, "mallory")
    try:
        join(after, nb)
        time.sleep(0.5)  # after the positive check above: a joiner once the cell ended gets no report
        assert not [e for e in after.events if e["type"] == "ray_usage"]
    finally:
        after.close()
