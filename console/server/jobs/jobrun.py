"""One job run, headless: the notebook's revision at firing, as the job's owner, cell by cell.

The run happens in a kernel session of its own (lane `job-<id>` of the owner's sessions,
console/server/sessions/kernels.py), started for the run and closed after it; every cell run is an
ordinary stored run, so the notebook page shows its output. The first cell that does not end
`done` ends the job run; a run past the job's timeout is interrupted. The owner must still hold
the editor role on the notebook when it fires; if not, the job is disabled with the reason.
Then a retry is queued (trigger `retry`, to start after the job's retry delay) while attempts
remain, and the webhook (webhook.py) is told of the final outcome (every failure, successes when
asked), retried with backoff and recorded. The timeout, the retry's delay and the webhook's
backoff are on the runner's clock (console/clock.py), which tests move; the cell runs themselves
are watched in real time, since kernels run in it.
"""
from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from console.clock import Clock, SystemClock
from console.ids import CellId, NotebookId, RunId, UserId
from console.lang import params as notebook_params
from console.protocols import KernelManager
from console.roles import at_least
from console.server.jobs import webhook
from console.store import FINAL_STATES, NotFound, Store
from console.store.jobs import JobRecord, JobRunRecord

log = logging.getLogger(__name__)
_REAL = SystemClock()  # an interrupt is answered in real seconds, whatever the runner's clock says
WEBHOOK_TRIES = 4  # then give up; each delivery attempt is recorded
WEBHOOK_TIMEOUT = 10.0
SCHEDULE_ROLE = "editor"  # the least role on the notebook that may schedule it (and keep it scheduled)


def lane_of(job_id: str) -> str:
    return f"job-{job_id}"


def owner_problem(store: Store, job: JobRecord) -> str | None:
    """Why the owner may no longer run this job, or None."""
    from console.server.access import role_of

    if job.owner_id is None:
        return "its owner's account was deleted"
    try:
        owner = store.get_user(job.owner_id)
        nb = store.get_notebook_info(job.notebook_id)
    except NotFound:
        return "its owner's account was deleted"
    have = role_of(store, owner, nb)
    if not at_least(have, SCHEDULE_ROLE):
        return (f"its owner {owner.username} no longer has the {SCHEDULE_ROLE} role on the notebook "
                f"(now: {have or 'no access'})")
    return None


def declared_params(store: Store, notebook_id: str) -> list[notebook_params.Param]:
    nb = store.get_notebook(notebook_id)
    return notebook_params.declared([(c.kind, c.source) for c in nb.cells])


def check_params(store: Store, notebook_id: str, values: dict[str, str]) -> dict[str, str]:
    """The values as text; notebook_params.UnknownParams (a ValueError) for an undeclared name,
    UnsafeParam (one too) for a value that cannot stand where the cells substitute it."""
    cells = [(c.kind, c.source) for c in store.get_notebook(notebook_id).cells]
    return notebook_params.check(notebook_params.declared(cells), values, cells)


def cell_label(position: int | None, source: str, limit: int = 60) -> str:
    """A cell as a person finds it in the notebook: "cell 2 (select * from sales…)", its number
    and its first line with text; a cell deleted since has no number."""
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    line = line if len(line) <= limit else line[:limit - 1] + "…"
    name = f"cell {position}" if position else "a deleted cell"
    return f"{name} ({line})" if line else name


def first_line(error: dict[str, Any] | None, where: str = "") -> str:
    """The first line of a cell run's error, after `where` (cell_label) when given."""
    if not error:
        return ""
    text = str(error.get("message") or error.get("kind") or "")
    line = text.strip().split("\n", 1)[0]
    return ((f"{where}: " if where else "") + line)[:500]


class JobRunner:
    """Runs claimed job runs; `renew` keeps their leases while they go (called by the scheduler)."""

    def __init__(self, store: Store, manager: Callable[[], KernelManager], base_url: str,
                 webhook_backoff: float = 1.0, webhook_private: bool = False, clock: Clock | None = None) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.manager = manager
        self.base_url = base_url.rstrip("/")
        self.webhook_backoff = webhook_backoff
        self.webhook_private = webhook_private  # CONSOLE_WEBHOOK_PRIVATE: may it call loopback and private addresses
        self._waits: set[threading.Event] = set()  # the run ends waited for now (wake() sets them)
        self._waits_lock = threading.Lock()

    def run(self, run: JobRunRecord, stopping: Callable[[], bool] = lambda: False,
            stepped: Callable[[], None] = lambda: None) -> JobRunRecord:
        """Run it to its end; `stepped` is told each time a cell run of it was queued."""
        job = self.store.get_job(run.job_id)
        problem = owner_problem(self.store, job)
        if problem is not None:
            self.store.update_job(job.id, enabled=False, disabled_reason=f"disabled: {problem}")
            ended = self.store.finish_job_run(run.id, "error", f"not run: {problem}", self.clock.now())
            self._notify(job, ended)
            return ended
        status, error = self._run_cells(job, run, stopping, stepped)
        ended_at = self.clock.now()
        ended = self.store.finish_job_run(run.id, status, error, ended_at)
        if status != "done" and run.attempt <= job.retries and not stopping():
            wait = timedelta(seconds=job.retry_delay_seconds)
            self.store.queue_job_run(job.id, "retry", run.params, attempt=run.attempt + 1,
                                     scheduled_for=run.scheduled_for, triggered_by=run.triggered_by,
                                     not_before=(ended_at + wait) if wait else None)
        elif status != "done" or job.notify_success:
            self._notify(job, ended)
        return ended

    def _run_cells(self, job: JobRecord, run: JobRunRecord, stopping: Callable[[], bool],
                   stepped: Callable[[], None]) -> tuple[str, str]:
        owner, nb_id, lane = UserId(job.owner_id or 0), NotebookId(job.notebook_id), lane_of(job.id)
        self.store.snapshot_notebook(nb_id, author_id=owner)  # the revision it runs is in the history
        nb = self.store.get_notebook(nb_id)
        cells = [c for c in nb.cells if c.kind != "markdown"]
        try:
            sources = [(c.kind, c.source) for c in nb.cells]
            values = notebook_params.check(notebook_params.declared(sources), run.params, sources)
        except ValueError as exc:  # the notebook lost a parameter, or uses it elsewhere, since the job was made
            self.store.set_job_run(run.id, revision=nb.revision)
            return "error", str(exc)
        # Its kernel starts in the environment kept at this revision (console/server/sessions/environments.py).
        lock = self.store.get_environment(nb_id, nb.revision)["lock_hash"]
        self.store.set_job_run(run.id, revision=nb.revision, lock_hash=lock)
        deadline = self.clock.monotonic() + job.timeout_seconds
        manager, ran = self.manager(), []
        position = {c.id: i + 1 for i, c in enumerate(nb.cells)}
        try:
            for c in cells:
                label = cell_label(position[c.id], c.source)
                source = notebook_params.apply(c.kind, c.source, values)
                (rid,) = manager.queue_cells(owner, nb_id, [(CellId(c.id), source, c.kind)], lane=lane,
                                             params=values, revision=nb.revision, job=(job.id, job.name))
                ran.append(rid)
                self.store.set_job_run(run.id, run_ids=list(ran))
                stepped()
                status = self._wait(rid, deadline, self.clock, stopping)
                if status is None:
                    manager.interrupt(owner, nb_id, lane)
                    # Real seconds: the kernel answers an interrupt in real time, whatever the clock says.
                    self._wait(rid, _REAL.monotonic() + 10, _REAL, stopping)
                    if stopping():
                        return "interrupted", "the server stopped while the job ran"
                    return "timeout", f"timed out after {job.timeout_seconds} s (in {label})"
                if status != "done":
                    record = self.store.get_run(rid)
                    return "error", first_line(record.error, label) or f"{label}: {status}"
            return "done", ""
        finally:
            manager.close(owner, nb_id, lane)

    def _wait(self, run_id: RunId, deadline: float, clock: Clock,
              stopping: Callable[[], bool]) -> str | None:
        """The cell run's final status; None at `deadline` on `clock` (or when the server stops).

        Woken by the run's end (the manager's watch_end), by the clock reaching the deadline, or by
        wake() (the scheduler stops): the store is read once per wake, never polled."""
        with self.manager().watch_end(run_id) as ended:
            with self._waits_lock:
                self._waits.add(ended)
            try:
                while not stopping():
                    status = self.store.get_run(run_id).status  # after watching: an end in between is here
                    if status in FINAL_STATES:
                        return status
                    remaining = deadline - clock.monotonic()
                    if remaining <= 0 or not clock.sleep(remaining, until=ended):
                        return None
                    ended.clear()  # woken: read the store again (a stop wakes it too)
                return None
            finally:
                with self._waits_lock:
                    self._waits.discard(ended)

    def wake(self) -> None:
        """The scheduler stops: every wait for a run's end looks at `stopping` now."""
        with self._waits_lock:
            for ended in self._waits:
                ended.set()

    # ------------------------------------------------------------------ the webhook
    def payload(self, job: JobRecord, run: JobRunRecord) -> dict[str, Any]:
        try:
            notebook_name = self.store.get_notebook_info(job.notebook_id).name
        except NotFound:
            notebook_name = ""

        def iso(t: datetime | None) -> str | None:
            return t.isoformat() if t else None

        return {
            "job": {"id": job.id, "name": job.name},
            "notebook": {"id": job.notebook_id, "name": notebook_name},
            "run": {"id": run.id, "trigger": run.trigger, "attempt": run.attempt, "started": iso(run.started_at),
                    "ended": iso(run.ended_at), "params": run.params, "revision": run.revision,
                    "cell_runs": run.run_ids},
            "status": run.status,
            "error": run.error.split("\n", 1)[0] if run.error else "",
            "link": f"{self.base_url}/jobs?job={job.id}&run={run.id}",
        }

    def _notify(self, job: JobRecord, run: JobRunRecord) -> None:
        if not job.webhook_url:
            return
        body = json.dumps(self.payload(job, run)).encode()
        tries: list[dict[str, Any]] = []
        for n in range(WEBHOOK_TRIES):
            if n:
                self.clock.sleep(self.webhook_backoff * 2 ** (n - 1))
            try:  # http(s) only: jobs.py checks
                code = webhook.post(job.webhook_url, body, allow_private=self.webhook_private, timeout=WEBHOOK_TIMEOUT)
            except webhook.Refused as exc:
                tries.append({"error": str(exc)})
                break
            except OSError as exc:
                tries.append({"error": str(exc)[:200]})
                continue
            tries.append({"status": code})
            if code < 300 or (code < 500 and code != 429):
                break  # delivered; or refused (a 4xx, a redirect not followed): asking again will not change that
        ok = bool(tries) and 200 <= int(tries[-1].get("status") or 0) < 300
        self.store.record_webhook(run.id, {"url": job.webhook_url, "delivered": ok, "attempts": tries})
        if not ok:
            log.warning("job %s: the webhook for run %s was not delivered: %s", job.id, run.id, tries[-1])
