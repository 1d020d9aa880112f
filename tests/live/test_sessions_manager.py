"""SessionManager in-process (no web server): culling, big outputs, metrics, replay ordering."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.config import load_config
from console.server.sessions.kernels import SessionManager
from console.store import Store
from tests.support.live_server import SCRIPTED_KERNEL, server_env


class Room:
    """Collects what the manager broadcasts."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.cond = threading.Condition()

    def __call__(self, notebook_id: str, events: list[dict[str, Any]]) -> None:
        with self.cond:
            self.events.extend(events)
            self.cond.notify_all()

    def wait(self, pred: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for e in self.events:
                    if pred(e):
                        return e
                if time.monotonic() > deadline:
                    raise AssertionError(f"nothing matched; last events {self.events[-4:]}")
                self.cond.wait(0.2)


def _managed(tmp_path: Path, idle: int) -> Iterator[tuple[SessionManager, Store, Room]]:
    cfg = load_config({"DATA_DIR": str(tmp_path), "KERNEL_IDLE_SECONDS": idle, "OUTPUT_INLINE_BYTES": 20000})
    store = Store(cfg.database_url)
    room = Room()
    manager = SessionManager(cfg, store, room, kernel_env={"PYTHONPATH": server_env()["PYTHONPATH"]},
                             kernel_module=SCRIPTED_KERNEL).start()
    yield manager, store, room
    manager.shutdown()
    store.close()


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[SessionManager, Store, Room]]:
    yield from _managed(tmp_path, idle=2)


@pytest.fixture
def culling(tmp_path: Path) -> Iterator[tuple[SessionManager, Store, Room]]:
    """A manager that stops a kernel after 1 s idle (the shortest the setting allows)."""
    yield from _managed(tmp_path, idle=1)


def notebook(store: Store, *sources: str) -> Any:
    user = store.ensure_user("admin")
    return store.create_notebook(f"nb{time.monotonic_ns()}", owner_id=user.id,
                                 cells=[{"kind": "mlsql", "source": s} for s in sources])


def done(room: Room, run_id: str) -> dict[str, Any]:
    return room.wait(lambda e: e["type"] == "cell_status" and e["run_id"] == run_id
                     and e["status"] in ("done", "error", "interrupted", "cancelled"))


def test_idle_kernel_is_culled_but_never_while_running(culling: Any) -> None:
    manager, store, room = culling
    nb = notebook(store, "--script\nsleep 2\n")
    run_id = manager.run(1, nb.id, "cell", nb.cells[0].id)[0]
    pid = manager.session(1, nb.id).kernel.pid
    assert done(room, run_id)["status"] == "done"  # ran 2 s with a 1 s idle limit
    culled = room.wait(lambda e: e["type"] == "kernel_status" and e["status"] == "dead", timeout=15)
    assert "idle" in culled["reason"]
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:  # the process goes soon after its status
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    again = manager.run(1, nb.id, "cell", nb.cells[0].id)[0]  # a run starts a new kernel
    assert done(room, again)["status"] == "done"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_big_output_replays_head_marker_tail_and_the_log_keeps_all(setup: Any) -> None:
    manager, store, room = setup
    nb = notebook(store, "--script\nprint 4000\n")
    run_id = manager.run(1, nb.id, "cell", nb.cells[0].id)[0]
    done(room, run_id)
    with manager.locks(nb.id):
        events = manager.replay(nb.id, {}, {})
    outputs = [e for e in events if e.type == "output"]
    hidden = [e for e in events if e.type == "output_hidden"]
    assert len(hidden) == 1 and hidden[0].hidden_bytes > 10000
    assert 10000 < sum(len(e.text) for e in outputs) <= 20000
    seqs = [e.seq if e.type == "output" else (e.first_seq, e.last_seq) for e in events
            if e.type in ("output", "output_hidden")]
    cut = seqs.index((hidden[0].first_seq, hidden[0].last_seq))
    assert seqs[cut - 1] + 1 == hidden[0].first_seq and hidden[0].last_seq + 1 == seqs[cut + 1]
    assert outputs[0].text.startswith("line 1\n") and outputs[-1].text.endswith("line 4000\n")
    from console.outputs.replay import full_log

    # The rows keep only the head and tail; the whole log is the run's file.
    log = b"".join(full_log(store, manager.cfg.data_dir, run_id)).decode()
    assert log.splitlines() == [f"line {i}" for i in range(1, 4001)]


def test_metrics_are_stored_and_replayed_after_since(setup: Any) -> None:
    manager, store, room = setup
    nb = notebook(store, "--script\nmetrics 4 from worker-0\n")
    run_id = manager.run(1, nb.id, "cell", nb.cells[0].id)[0]
    done(room, run_id)
    live = [e for e in room.events if e["type"] == "metrics"]
    assert [e["step"] for e in live] == [1, 2, 3, 4] and [e["seq"] for e in live] == [1, 2, 3, 4]
    with manager.locks(nb.id):
        events = manager.replay(nb.id, {}, {run_id: 2})
    assert [(e.seq, e.values["loss"]) for e in events if e.type == "metrics"] == [(3, 1 / 3), (4, 0.25)]


def test_replay_order_status_output_result_then_final_status(setup: Any) -> None:
    manager, store, room = setup
    nb = notebook(store, "select 5 as five as t;")
    run_id = manager.run(1, nb.id, "cell", nb.cells[0].id)[0]
    done(room, run_id)
    live = [e["type"] for e in room.events if e.get("run_id") == run_id]
    assert live[0] == "cell_status" and live[-1] == "cell_status" and "result" in live
    assert live.index("result") == len(live) - 2

