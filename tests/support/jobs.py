"""Jobs against a live server: its scheduler started, and waits on what the scheduler says.

`after_runs` waits on the scheduler's `passed` condition (notified after each pass, each cell a
job run queues and each run's end) instead of polling on a timer; `a_pass_since` waits until the
scheduler has looked at the store at or after a time of its clock (after a test moved it).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from console.server.jobs.scheduler import JOBS_KEY, JobScheduler
from tests.support.live_server import LiveServer

T = TypeVar("T")


@contextmanager
def jobs_server(data_dir: str, **settings: Any) -> Iterator[LiveServer]:
    """A LiveServer whose scheduler runs (a serving process starts it; create_app does not)."""
    server = LiveServer(data_dir, **settings)
    scheduler(server).start()
    try:
        yield server
    finally:
        scheduler(server).stop()
        server.close()


def scheduler(live: LiveServer) -> JobScheduler:
    sched: JobScheduler = live.app.extensions[JOBS_KEY]
    return sched


def after_runs(live: LiveServer, check: Callable[[], T | None], what: str = "the job runs",
               timeout: float = 90.0) -> T:
    """`check()` once it is truthy, looked at again each time the scheduler reports a change.

    The timeout only ends a test that would hang; nothing here measures how long it took.
    """
    sched = scheduler(live)
    got: list[T | None] = [None]

    def ready() -> bool:
        got[0] = check()
        return bool(got[0])

    with sched.passed:
        if not sched.passed.wait_for(ready, timeout):
            raise AssertionError(f"{what}: not there after {timeout:.0f} s: {got[0]!r}")
    return got[0]  # type: ignore[return-value]


def a_pass_since(live: LiveServer, when: datetime, timeout: float = 60.0) -> None:
    """Once the scheduler has made a pass at `when` (its clock's time) or later."""
    sched = scheduler(live)
    after_runs(live, lambda: sched.last_pass is not None and sched.last_pass >= when,
               f"a scheduler pass at {when.isoformat()} or later", timeout)
