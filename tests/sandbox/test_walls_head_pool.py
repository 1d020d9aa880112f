"""Session heads started before their sessions (issue 29 item 2): a kernel whose notebook mentions
Ray takes a pooled wall with its head already up, runs as that wall's uid on that head, and the
pool starts the next one; the pooled head shows no session's cache; a notebook that never
mentions Ray leaves the pool's head alone; the server's stop takes the idle head down. A real
sandboxed server (root, bubblewrap), real kernels and real Ray heads."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.clients import runs_ended
from tests.support.live_server import REAL_KERNEL, LiveServer

pytestmark = [pytest.mark.ray, pytest.mark.sandbox]

PROBE = """--%python
import json, os
import ray
from pyjava.api.mlsql import RayContext
RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
def look(cache):
    return {{"uid": os.getuid(), "cache": sorted(os.listdir(cache))}}

print("POOLED " + json.dumps({{"task": ray.get(look.remote({cache!r})), "kernel_uid": os.getuid()}}))
"""


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    from console.cluster import sandbox

    data_dir = tmp_path_factory.mktemp("head-pool") / "data"
    server = LiveServer(str(data_dir), kernel_module=REAL_KERNEL, RAY_POOL=1, RAY_NUM_CPUS=2)
    if not sandbox.enabled(server.app.extensions["config"]):
        server.close()
        pytest.skip("the pool serves sandboxed sessions only (root and bubblewrap)")
    try:
        yield server
    finally:
        server.close()


def _ready(live: LiveServer) -> Any:
    pool = live.manager.pool
    assert pool is not None, "a sandboxed server with CONSOLE_RAY_POOL=1 keeps a pool"
    assert pool.wait_ready(1, 180), f"no pooled head came up: {pool._failed}"
    with pool._lock:
        return pool._ready[0]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def _run_all(live: LiveServer, nb: Any) -> list[Any]:
    admin = live.store.ensure_user("admin")
    return runs_ended(live, live.manager.run(admin.id, nb.id, "all", None), 240)


def test_a_ray_notebook_takes_the_pooled_head_and_the_pool_starts_another(live: LiveServer) -> None:
    wall, head = _ready(live)
    pooled_pid, pooled_uid = head.info.pid, wall.lease.uid
    cache = live.manager.cfg.data_dir / "cache"
    nb = live.notebook(("python", PROBE.format(cache=str(cache))))
    (run,) = _run_all(live, nb)
    assert run.status == "done", run.error
    text = "".join(o.text for o in live.store.iter_outputs(run.id))
    report = json.loads(text.split("POOLED ", 1)[1].splitlines()[0])
    kernel = live.manager.session(live.store.ensure_user("admin").id, nb.id).kernel
    assert kernel.cluster is head and kernel.cluster.info.pid == pooled_pid  # the head that was waiting
    assert report["kernel_uid"] == report["task"]["uid"] == pooled_uid  # kernel and actors: the wall's uid
    assert report["task"]["cache"] == []  # no session's cache in a head started before its session
    # The pool starts the next one: another uid, another head.
    next_wall, next_head = _ready(live)
    assert next_head is not head and next_wall.lease.uid != pooled_uid and next_head.info.pid != pooled_pid
    # It ends with its session, as any session's head.
    kp = kernel
    live.manager.shut_down(live.manager.session(live.store.ensure_user("admin").id, nb.id),
                           live.store.ensure_user("admin").id)
    kp.stop(3.0)
    deadline = time.monotonic() + 60
    while _alive(pooled_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pooled_pid), "the session's pooled head outlived its kernel"


def test_a_notebook_without_ray_leaves_the_pooled_head_alone(live: LiveServer) -> None:
    _, head = _ready(live)
    nb = live.notebook(("python", "--%python\nprint('no cluster here')\n"), "select 1 as a as t;")
    runs = _run_all(live, nb)
    assert [r.status for r in runs] == ["done", "done"], [r.error for r in runs]
    kernel = live.manager.session(live.store.ensure_user("admin").id, nb.id).kernel
    assert kernel.cluster is not head and not kernel.cluster.running()
    _, still = _ready(live)
    assert still is head and head.running()


def test_the_servers_stop_takes_its_idle_pooled_head_down(live: LiveServer, tmp_path: Any) -> None:
    other = LiveServer(str(tmp_path / "data"), kernel_module=REAL_KERNEL, RAY_POOL=1, RAY_NUM_CPUS=2)
    try:
        wall, head = _ready(other)
        pid, handoff = head.info.pid, wall.handoff
        assert _alive(pid) and handoff is not None and handoff.is_dir()
    finally:
        other.close()
    deadline = time.monotonic() + 60
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid) and not handoff.exists() and not head.root.exists()
