"""The job scheduler: one thread per server process that fires due jobs and starts queued job runs.

It sleeps until the earliest due time in the store (a job's next firing, or the end of a retry's
delay), a wake-up from this process's API, or at most a third of the lease, then: marks runs of
servers that died (lapsed leases) interrupted, claims due occurrences (console/store/jobs.py: each
is claimed by one process only), starts the queued runs whose job is free and whose wait is over,
each on a thread of its own, and renews its own runs' leases.
Started by the serving process (gunicorn's post_fork, `serve --dev`), never at import or by
create_app alone, so tests and the gunicorn arbiter do not fire jobs.
Time is the app's clock (console/clock.py), in the store's stamps too: a test moves it to fire a
cron, end a retry's wait or a timeout. `passed` is the test's event: a pass ended, a run ended.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from console.clock import Clock
from console.server.jobs import schedule
from console.server.jobs.jobrun import JobRunner
from console.store import Store
from console.store.jobs import JobRecord, JobRunRecord

log = logging.getLogger(__name__)
JOBS_KEY = "console.jobs"
LEASE_SECONDS = 30.0


def schedule_of(job: JobRecord) -> schedule.Schedule:
    return schedule.Schedule(job.schedule_kind, job.cron, job.every_minutes, job.timezone)


def next_of(job: JobRecord, due: datetime, now: datetime) -> datetime | None:
    """The store's `next_of`: the occurrence after `due` fired at `now` (misfires fire once)."""
    return schedule.following(schedule_of(job), due, now, anchor=job.created_at)


class JobScheduler:
    def __init__(self, store: Store, runner: JobRunner, lease_seconds: float = LEASE_SECONDS,
                 execute: Callable[[JobRunRecord], object] | None = None, clock: Clock | None = None) -> None:
        self.store = store
        self.runner = runner
        self.clock: Clock = clock or runner.clock
        self.lease = timedelta(seconds=lease_seconds)
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._execute = execute or self._run_job
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._mine: dict[str, threading.Thread] = {}
        self._guard = threading.Lock()
        # Notified after each pass, each cell a run queued and each run's end (what tests wait on);
        # `last_pass` is the latest clock time at which the scheduler looked at the store (a pass,
        # or finding nothing due before it sleeps): a test that moved the clock knows from it that
        # the scheduler has seen the store at the new time.
        self.passed = threading.Condition()
        self.last_pass: datetime | None = None
        # Told (job run) when a run was claimed or queued, started, queued a cell, ended or was
        # reaped: console/server/jobs/jobs.py sends the Jobs pages jobs_changed (live/jobwatch.py).
        self.on_change: Callable[[JobRunRecord], None] = lambda run: None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> JobScheduler:
        """Start in this process (again after a fork: threads do not survive one)."""
        with self._guard:
            if self._thread is not None and self._pid == os.getpid() and self._thread.is_alive():
                return self
            self._pid = os.getpid()
            self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="job-scheduler", daemon=True)
            self._thread.start()
        return self

    def stop(self, wait: float = 15.0) -> None:
        self._stop.set()
        self._wake.set()
        self.runner.wake()  # a job waiting for its cell's end stops waiting
        thread = self._thread
        if thread is not None and thread.is_alive() and self._pid == os.getpid():
            thread.join(timeout=wait)
        for t in list(self._mine.values()):
            t.join(timeout=wait)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._pid == os.getpid()

    def wake(self) -> None:
        """Look at the store now (a job was made, changed, or asked to run)."""
        self._wake.set()

    # ------------------------------------------------------------------ the loop
    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:  # a database hiccup must not end the scheduler
                log.exception("job scheduler tick failed")
            self.clock.sleep_until(self._wake_at(), until=self._wake)
            self._wake.clear()

    def _wake_at(self) -> datetime:
        """The next due time, or a third of the lease from now (to renew leases and reap in time)."""
        now = self.clock.now()
        latest = now + self.lease / 3
        try:
            due = self.store.next_due(now)
        except Exception:
            return latest
        wake = latest if due is None else min(latest, due)
        if wake > now:
            self._passed(now)  # nothing is due before it wakes: as good as a pass at `now`
        return wake

    def tick(self, now: datetime | None = None) -> list[JobRunRecord]:
        """One pass; returns the runs this process started."""
        now = now or self.clock.now()
        # Ours first, then others': a pass that came late (a stalled process, a moved clock) must
        # not take this process's own runs for a dead server's.
        with self._guard:
            mine = list(self._mine)
        for run_id in mine:
            self.store.renew_lease(run_id, self.holder, self.lease, now)
        for lapsed in self.store.reap_lapsed(now):
            log.warning("job run %s of job %s was interrupted: %s", lapsed.id, lapsed.job_id, lapsed.error)
            self.on_change(lapsed)
        for claimed in self.store.claim_due(now, next_of):
            self.on_change(claimed)
        started = []
        for queued in self.store.queued_job_runs(now):
            if self._stop.is_set():
                break
            run: JobRunRecord | None = self.store.start_job_run(queued.id, self.holder, self.lease, now)
            if run is None:
                continue  # another run of that job holds its slot, or another process took this one
            started.append(run)
            self.on_change(run)
            t = threading.Thread(target=self._guarded, args=(run,), name=f"job-run-{run.id}", daemon=True)
            with self._guard:
                self._mine[run.id] = t
            t.start()
        self._passed(now)
        return started

    def _passed(self, when: datetime | None = None) -> None:
        with self.passed:
            if when is not None and (self.last_pass is None or when > self.last_pass):
                self.last_pass = when
            self.passed.notify_all()

    def _guarded(self, run: JobRunRecord) -> None:
        try:
            self._execute(run)
        except Exception as exc:
            log.exception("job run %s failed in the server", run.id)
            try:
                self.store.finish_job_run(run.id, "error", f"the server failed running it: {type(exc).__name__}",
                                          self.clock.now())
            except Exception:
                log.exception("recording the end of job run %s failed", run.id)
        finally:
            with self._guard:
                self._mine.pop(run.id, None)
            self._wake.set()  # a queued or retry run of the job may start now
            self._passed()
            self.on_change(run)  # it ended (and a retry may be queued)

    def _run_job(self, run: JobRunRecord) -> None:
        def stepped() -> None:
            self._passed()
            self.on_change(run)  # a cell of it was queued: its history has one more output

        self.runner.run(run, stopping=self._stop.is_set, stepped=stepped)
