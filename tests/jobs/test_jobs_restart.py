"""A server killed while a job runs: the run ends `interrupted`, the schedule goes on, nothing fires twice.

The production server (gunicorn, in a child process) is killed with SIGKILL together with
everything it started, as a crash would, then started again on the same data folder with its
clock a lease and a second ahead (tests/support/serve.py): for it the dead server's lease has
lapsed at once, instead of the test waiting out the 30 s.
"""
from __future__ import annotations

import os
import signal
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from console.server.jobs.scheduler import LEASE_SECONDS
from tests.support.live_server import start_server


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _crash(proc: Any) -> None:
    for pid in [proc.pid, *_descendants(proc.pid)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=30)


def _until(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"{what} did not happen within {timeout:.0f} s")


@pytest.mark.slow
def test_a_killed_server_leaves_its_job_run_interrupted_and_the_schedule_goes_on(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = start_server(data)
    try:
        nb = first.notebook("long", "--script\nsleep 120\n", "select 1 as a as t;")
        # once a year: the second server's clock is ahead, and no firing of the schedule may fall in between
        job = first.api("POST", "/jobs", {"notebook_id": nb["id"], "cron": "0 3 1 1 *", "name": "long"})
        first.api("POST", f"/jobs/{job['id']}/run", {})

        def running() -> Any:
            runs = first.api("GET", f"/jobs/{job['id']}/runs")["runs"]
            return runs and runs[0]["status"] == "running" and runs[0]["run_ids"] and runs[0]
        run = _until(running, 60, "the job run starting")
        _until(lambda: first.api("GET", f"/runs/{run['run_ids'][0]}")["status"] == "running", 60,
               "its cell running in the kernel")
    finally:
        _crash(first.proc)
    second = start_server(data, clock_ahead=LEASE_SECONDS + 1)
    try:
        def ended() -> Any:
            runs = second.api("GET", f"/jobs/{job['id']}/runs")["runs"]
            return runs[0]["status"] != "running" and runs
        runs = _until(ended, 60, "the dead server's lease lapsing")
        assert len(runs) == 1 and runs[0]["id"] == run["id"] and runs[0]["status"] == "interrupted"
        assert "stopped" in runs[0]["error"]
        cell = second.api("GET", f"/runs/{run['run_ids'][0]}")
        assert cell["status"] not in ("queued", "running")  # the cell run is closed too
        after = second.api("GET", f"/jobs/{job['id']}")
        assert after["enabled"] and after["running_run_id"] is None
        assert datetime.fromisoformat(after["next_run_at"]) > datetime.now(timezone.utc)
        # the job is free again: a new run goes, and the interrupted one never ran a second time
        new = second.api("POST", f"/jobs/{job['id']}/run", {})

        def started() -> Any:
            runs = second.api("GET", f"/jobs/{job['id']}/runs")["runs"]
            return runs[0]["status"] == "running" and runs
        runs = _until(started, 60, "the new run starting")
        assert [(r["id"], r["status"]) for r in runs] == [(new["id"], "running"), (run["id"], "interrupted")]
        # it holds the job's one slot: nothing else of this job can start while it runs
        assert second.api("GET", f"/jobs/{job['id']}")["running_run_id"] == new["id"]
    finally:
        second.stop()
