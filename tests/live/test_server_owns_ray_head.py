"""The server owns the data dir's embedded Ray head: its kernel manager records the server as the
head's owner when it starts (so kernels that come and go do not stop it) and stops it on shutdown.
No head is started here; the record is <data_dir>/server/head.json, in the private folder."""
from __future__ import annotations

import json
import os
from pathlib import Path

from console.config import Config
from console.server import create_app


def _head_record(data_dir: Path) -> dict[str, object] | None:
    path = data_dir / "server" / "head.json"
    return json.loads(path.read_text()) if path.exists() else None


def test_the_server_owns_the_head_and_lets_go_on_shutdown(cfg: Config) -> None:
    tmp_path = cfg.data_dir
    app = create_app({**cfg, "TESTING": True})
    holder = app.extensions["sessions"]
    assert _head_record(tmp_path) is None  # nothing at create_app: gunicorn forks after it
    holder.get()
    record = _head_record(tmp_path)
    assert record is not None and record["owner"] == os.getpid()
    holder.shutdown()
    assert _head_record(tmp_path) is None
    app.extensions["store"].close()


def test_a_server_that_does_not_own_the_head_leaves_it_alone(cfg: Config) -> None:
    tmp_path = cfg.data_dir
    app = create_app({**cfg, "TESTING": True, "RAY_HEAD_OWNER": False})
    app.extensions["sessions"].get()
    assert _head_record(tmp_path) is None
    app.extensions["sessions"].shutdown()
    app.extensions["store"].close()


def test_a_stale_head_record_never_signals_the_process_that_reused_its_pid(cfg: Config) -> None:
    """A long-lived server starts thousands of processes, so the pid of a head that died is soon
    another process's (a kernel's). Stopping the recorded head must not kill that one, nor reap
    it: its owner's wait() would then read exit code 0 for a kernel that was killed."""
    import subprocess
    import sys

    from console.cluster.head import RayCluster
    from console.cluster.procs import process_start

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        started = process_start(other.pid)
        assert started is not None
        record = cfg.data_dir / "server" / "head.json"
        record.parent.mkdir(parents=True, exist_ok=True)
        # The record names the pid, but a process that started at another time: a head gone since.
        record.write_text(json.dumps({"info": {"address": "127.0.0.1:1", "pid": other.pid, "started": started - 1,
                                               "embedded": True}, "users": [], "owner": None}))
        assert RayCluster(cfg).stop(grace=0.5) is False
        assert other.poll() is None  # still running, and still ours to wait for
        # An old record without the start time: only a Ray process is taken for the head.
        record.write_text(json.dumps({"info": {"address": "127.0.0.1:1", "pid": other.pid, "embedded": True},
                                      "users": [], "owner": None}))
        assert RayCluster(cfg).stop(grace=0.5) is False
        assert other.poll() is None
    finally:
        other.kill()
        assert other.wait(5) == -9  # its status was left for us: nobody else reaped it
