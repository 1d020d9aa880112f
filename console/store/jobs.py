"""Jobs and job runs: schedules that live in the store, and the claims that make each firing run once.

Exactly once, with any number of server processes on one database:
- an occurrence is claimed by moving jobs.next_run_at on with a compare-and-set UPDATE (WHERE
  next_run_at = the due time): whoever's UPDATE changes the row owns that firing, the others'
  change nothing (PostgreSQL re-checks the WHERE after the winner commits; SQLite writes one at a
  time); its job_runs row is unique per (job, occurrence, attempt) besides;
- a job run starts by taking the job's slot (running_run_id IS NULL -> its id, the same kind of
  UPDATE) and holds a lease that its server renews; a run whose lease lapsed belonged to a server
  that died, and `reap_lapsed` marks it interrupted and frees the slot.
The cron arithmetic is the caller's (`next_of`): the store only keeps and compares times, and
takes "now" from its caller where one is given (the scheduler's clock, console/clock.py), so that
a test that moves the clock moves every time on the job path, leases and stamps included.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import Any, Literal, get_args

from sqlalchemy import delete, or_, select, update

from console.store.db import StoreBase, new_id
from console.store.errors import Invalid, NotFound
from console.store.models import Job, JobRun, Notebook, utcnow

JOB_RUN_STATES = ("queued", "running", "done", "error", "timeout", "interrupted", "skipped")
JOB_RUN_FINAL = ("done", "error", "timeout", "interrupted", "skipped")
TRIGGERS = ("schedule", "manual", "retry")
Overlap = Literal["skip", "queue"]  # what a job does when it comes due while a run of it is on
OVERLAPS: tuple[str, ...] = get_args(Overlap)


@dataclass(frozen=True)
class JobRecord:
    id: str
    name: str
    notebook_id: str
    owner_id: int | None
    schedule_kind: str
    cron: str
    every_minutes: int | None
    timezone: str
    params: dict[str, str]
    retries: int
    retry_delay_seconds: int
    timeout_seconds: int
    overlap: str
    webhook_url: str
    notify_success: bool
    enabled: bool
    disabled_reason: str
    next_run_at: datetime | None
    running_run_id: str | None
    created_at: datetime
    updated_at: datetime


# What update_job may change: every field of a job but its identity, owner and the store's own stamps.
JOB_FIELDS = tuple(f.name for f in fields(JobRecord)
                   if f.name not in ("id", "notebook_id", "owner_id", "running_run_id", "created_at", "updated_at"))


@dataclass(frozen=True)
class JobRunRecord:
    id: str
    job_id: str
    trigger: str
    attempt: int
    status: str
    scheduled_for: datetime | None
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    params: dict[str, str]
    revision: int | None
    run_ids: list[str] = field(default_factory=list)
    error: str = ""
    triggered_by: int | None = None
    webhook: dict[str, Any] | None = None
    lease_holder: str = ""
    not_before: datetime | None = None  # queued: it starts no earlier (a retry waiting out its delay)
    lock_hash: str = ""  # the lock of the notebook's environment at the revision it ran ("": the base)


def _job(j: Job) -> JobRecord:
    return JobRecord(
        id=j.id, name=j.name, notebook_id=j.notebook_id, owner_id=j.owner_id, schedule_kind=j.schedule_kind,
        cron=j.cron, every_minutes=j.every_minutes, timezone=j.timezone, params=dict(j.params or {}),
        retries=j.retries, retry_delay_seconds=j.retry_delay_seconds, timeout_seconds=j.timeout_seconds,
        overlap=j.overlap, webhook_url=j.webhook_url,
        notify_success=bool(j.notify_success), enabled=bool(j.enabled), disabled_reason=j.disabled_reason,
        next_run_at=j.next_run_at, running_run_id=j.running_run_id, created_at=j.created_at,
        updated_at=j.updated_at)


def _job_run(r: JobRun) -> JobRunRecord:
    return JobRunRecord(
        id=r.id, job_id=r.job_id, trigger=r.trigger, attempt=r.attempt, status=r.status,
        scheduled_for=r.scheduled_for, created_at=r.created_at, started_at=r.started_at, ended_at=r.ended_at,
        params=dict(r.params or {}), revision=r.revision, run_ids=list(r.run_ids or []), error=r.error,
        triggered_by=r.triggered_by, webhook=r.webhook, lease_holder=r.lease_holder, not_before=r.not_before,
        lock_hash=r.lock_hash or "")


class _Lost(Exception):
    """A compare-and-set lost to another process: the transaction is rolled back."""


NextOf = Callable[[JobRecord, datetime, datetime], "datetime | None"]  # (job, due, now) -> the next due time


class JobsMixin(StoreBase):
    # ------------------------------------------------------------------ jobs
    def create_job(self, notebook_id: str, owner_id: int | None, name: str, *, schedule_kind: str,
                   next_run_at: datetime | None, cron: str = "", every_minutes: int | None = None,
                   timezone: str = "UTC", params: dict[str, str] | None = None, retries: int = 0,
                   retry_delay_seconds: int = 0, timeout_seconds: int = 3600, overlap: str = "skip",
                   webhook_url: str = "", notify_success: bool = False, enabled: bool = True,
                   now: datetime | None = None) -> JobRecord:
        """`now`: the caller's clock, which the job's created_at takes (an every-N-minutes schedule counts
        from it, so it must be on the scheduler's clock)."""
        if overlap not in OVERLAPS:
            raise Invalid(f"overlap must be one of {', '.join(OVERLAPS)}, not {overlap!r}")
        with self._write() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            job = Job(id=new_id(), name=name, notebook_id=notebook_id, owner_id=owner_id,
                      schedule_kind=schedule_kind, cron=cron, every_minutes=every_minutes, timezone=timezone,
                      params=dict(params or {}), retries=retries,
                      retry_delay_seconds=retry_delay_seconds, timeout_seconds=timeout_seconds,
                      overlap=overlap, webhook_url=webhook_url, notify_success=notify_success, enabled=enabled,
                      disabled_reason="", next_run_at=next_run_at if enabled else None,
                      created_at=now or utcnow(), updated_at=now or utcnow())
            s.add(job)
            s.flush()
            return _job(job)

    def get_job(self, job_id: str) -> JobRecord:
        with self._read() as s:
            job = s.get(Job, job_id)
            if job is None:
                raise NotFound(f"no job {job_id!r}")
            return _job(job)

    def list_jobs(self, notebook_id: str | None = None) -> list[JobRecord]:
        with self._read() as s:
            q = select(Job).order_by(Job.created_at, Job.id)
            if notebook_id is not None:
                q = q.where(Job.notebook_id == notebook_id)
            return [_job(j) for j in s.scalars(q)]

    def update_job(self, job_id: str, **changes: Any) -> JobRecord:
        bad = sorted(set(changes) - set(JOB_FIELDS))
        if bad:
            raise Invalid(f"a job has no setting {', '.join(bad)}")
        with self._write() as s:
            job = s.get(Job, job_id)
            if job is None:
                raise NotFound(f"no job {job_id!r}")
            for key, value in changes.items():
                setattr(job, key, value)
            if not job.enabled:
                job.next_run_at = None
            job.updated_at = utcnow()
            s.flush()
            return _job(job)

    def delete_job(self, job_id: str) -> None:
        with self._write() as s:
            if s.execute(delete(Job).where(Job.id == job_id)).rowcount == 0:  # type: ignore[attr-defined]
                raise NotFound(f"no job {job_id!r}")

    def next_due(self, now: datetime | None = None) -> datetime | None:
        """The earliest time an enabled job is due or a waiting retry may start (what the scheduler
        sleeps until). A retry whose wait is over is not due again: it starts when its job's slot
        frees, which wakes the scheduler itself; counting it would spin the scheduler meanwhile."""
        now = now or utcnow()
        with self._read() as s:
            fire = s.scalar(select(Job.next_run_at).where(Job.enabled.is_(True), Job.next_run_at.is_not(None))
                            .order_by(Job.next_run_at).limit(1))
            wait = s.scalar(select(JobRun.not_before).where(JobRun.status == "queued", JobRun.not_before > now)
                            .order_by(JobRun.not_before).limit(1))
        return min((t for t in (fire, wait) if t is not None), default=None)

    # ------------------------------------------------------------------ firing
    def claim_due(self, now: datetime, next_of: NextOf) -> list[JobRunRecord]:
        """Claim every occurrence due by `now`; returns the job runs made for them (queued, or skipped
        when the job still runs and its overlap policy is skip). A process that loses a claim to
        another gets nothing for it."""
        made: list[JobRunRecord] = []
        with self._read() as s:
            due = [_job(j) for j in s.scalars(select(Job).where(
                Job.enabled.is_(True), Job.next_run_at.is_not(None), Job.next_run_at <= now))]
        for job in due:
            assert job.next_run_at is not None
            following = next_of(job, job.next_run_at, now)
            with self._write() as s:
                moved = s.execute(update(Job).where(Job.id == job.id, Job.next_run_at == job.next_run_at,
                                                    Job.enabled.is_(True)).values(next_run_at=following))
                if moved.rowcount != 1:  # type: ignore[attr-defined]
                    continue  # another process fired it, or it was disabled meanwhile
                busy = s.scalar(select(Job.running_run_id).where(Job.id == job.id)) is not None
                skipped = busy and job.overlap == "skip"
                run = JobRun(id=new_id(), job_id=job.id, trigger="schedule", attempt=1,
                             status="skipped" if skipped else "queued", scheduled_for=job.next_run_at,
                             params=dict(job.params), run_ids=[], lease_holder="",
                             error="the previous run was still going (overlap: skip)" if skipped else "",
                             ended_at=now if skipped else None)
                s.add(run)
                s.flush()
                made.append(_job_run(run))
        return made

    def queue_job_run(self, job_id: str, trigger: str, params: dict[str, str], *, attempt: int = 1,
                      scheduled_for: datetime | None = None, triggered_by: int | None = None,
                      not_before: datetime | None = None) -> JobRunRecord:
        """A run that starts when the job's slot is free (run now, a retry), and not before `not_before`."""
        if trigger not in TRIGGERS:
            raise Invalid(f"trigger must be one of {', '.join(TRIGGERS)}")
        with self._write() as s:
            if s.get(Job, job_id) is None:
                raise NotFound(f"no job {job_id!r}")
            run = JobRun(id=new_id(), job_id=job_id, trigger=trigger, attempt=attempt, status="queued",
                         scheduled_for=scheduled_for, params=dict(params), run_ids=[], error="",
                         lease_holder="", triggered_by=triggered_by, not_before=not_before)
            s.add(run)
            s.flush()
            return _job_run(run)

    def start_job_run(self, run_id: str, holder: str, lease: timedelta,
                      now: datetime | None = None) -> JobRunRecord | None:
        """Take the job's slot for a queued run; None when another run holds it or someone else took this one.

        Both steps are compare-and-set UPDATEs in one transaction: a run read as queued may have
        been started and finished by another process meanwhile, freeing the slot again.
        """
        try:
            with self._write() as s:
                job_id = s.scalar(select(JobRun.job_id).where(JobRun.id == run_id))
                if job_id is None:
                    return None
                took = s.execute(update(Job).where(Job.id == job_id, Job.running_run_id.is_(None))
                                 .values(running_run_id=run_id))
                if took.rowcount != 1:  # type: ignore[attr-defined]
                    return None
                now = now or utcnow()
                moved = s.execute(update(JobRun).where(JobRun.id == run_id, JobRun.status == "queued").values(
                    status="running", started_at=now, lease_holder=holder, lease_until=now + lease))
                if moved.rowcount != 1:  # type: ignore[attr-defined]
                    raise _Lost  # not queued any more: give the slot back (the rollback)
                return _job_run(s.get_one(JobRun, run_id, populate_existing=True))
        except _Lost:
            return None

    def renew_lease(self, run_id: str, holder: str, lease: timedelta, now: datetime | None = None) -> bool:
        """Extend a running run's lease; False when it is no longer this holder's (it was reaped)."""
        with self._write() as s:
            done = s.execute(update(JobRun).where(JobRun.id == run_id, JobRun.status == "running",
                                                  JobRun.lease_holder == holder)
                             .values(lease_until=(now or utcnow()) + lease))
            return bool(done.rowcount == 1)  # type: ignore[attr-defined]

    def set_job_run(self, run_id: str, *, revision: int | None = None, run_ids: list[str] | None = None,
                    lock_hash: str | None = None) -> None:
        with self._write() as s:
            run = s.get(JobRun, run_id)
            if run is None:
                raise NotFound(f"no job run {run_id!r}")
            if revision is not None:
                run.revision = revision
            if run_ids is not None:
                run.run_ids = list(run_ids)
            if lock_hash is not None:
                run.lock_hash = lock_hash[:64]

    def finish_job_run(self, run_id: str, status: str, error: str = "", now: datetime | None = None) -> JobRunRecord:
        """How a run ended; frees the job's slot when the run held it."""
        if status not in JOB_RUN_FINAL:
            raise Invalid(f"a job run ends as one of {', '.join(JOB_RUN_FINAL)}, not {status!r}")
        with self._write() as s:
            job_id = s.scalar(select(JobRun.job_id).where(JobRun.id == run_id))
            if job_id is None:
                raise NotFound(f"no job run {run_id!r}")
            # Only a run still going ends here: a reaped one stays interrupted.
            s.execute(update(JobRun).where(JobRun.id == run_id, JobRun.status.not_in(JOB_RUN_FINAL))
                      .values(status=status, error=error[:2000], ended_at=now or utcnow()))
            s.execute(update(JobRun).where(JobRun.id == run_id).values(lease_until=None))
            s.execute(update(Job).where(Job.id == job_id, Job.running_run_id == run_id)
                      .values(running_run_id=None))
            return _job_run(s.get_one(JobRun, run_id, populate_existing=True))

    def record_webhook(self, run_id: str, delivery: dict[str, Any]) -> None:
        with self._write() as s:
            run = s.get(JobRun, run_id)
            if run is not None:
                run.webhook = delivery

    def reap_lapsed(self, now: datetime | None = None) -> list[JobRunRecord]:
        """Runs whose server stopped renewing their lease (it died): interrupted, their slot freed."""
        now = now or utcnow()
        lapsed_now = (JobRun.status == "running", or_(JobRun.lease_until.is_(None), JobRun.lease_until < now))
        out = []
        with self._write() as s:
            for run_id, job_id, holder in s.execute(select(JobRun.id, JobRun.job_id, JobRun.lease_holder)
                                                    .where(*lapsed_now)).all():
                # Again in the UPDATE: a lease renewed since the read is a live run's.
                gone = s.execute(update(JobRun).where(JobRun.id == run_id, *lapsed_now).values(
                    status="interrupted", ended_at=now, lease_until=None,
                    error=f"the server running it ({holder}) stopped"))
                if gone.rowcount != 1:  # type: ignore[attr-defined]
                    continue
                s.execute(update(Job).where(Job.id == job_id, Job.running_run_id == run_id)
                          .values(running_run_id=None))
                out.append(_job_run(s.get_one(JobRun, run_id, populate_existing=True)))
        return out

    def queued_job_runs(self, now: datetime | None = None) -> list[JobRunRecord]:
        """Queued runs whose job's slot is free and whose wait is over, oldest first (what the
        scheduler may start)."""
        now = now or utcnow()
        with self._read() as s:
            q = (select(JobRun).join(Job, Job.id == JobRun.job_id)
                 .where(JobRun.status == "queued", Job.running_run_id.is_(None),
                        or_(JobRun.not_before.is_(None), JobRun.not_before <= now))
                 .order_by(JobRun.created_at, JobRun.id))
            return [_job_run(r) for r in s.scalars(q)]

    # ------------------------------------------------------------------ history
    def get_job_run(self, run_id: str) -> JobRunRecord:
        with self._read() as s:
            run = s.get(JobRun, run_id)
            if run is None:
                raise NotFound(f"no job run {run_id!r}")
            return _job_run(run)

    def job_runs(self, job_id: str, limit: int = 50) -> list[JobRunRecord]:
        """Newest first."""
        with self._read() as s:
            q = (select(JobRun).where(JobRun.job_id == job_id)
                 .order_by(JobRun.created_at.desc(), JobRun.attempt.desc(), JobRun.id).limit(limit))
            return [_job_run(r) for r in s.scalars(q)]

    def last_job_runs(self, job_ids: list[str]) -> dict[str, JobRunRecord]:
        """Each job's newest run."""
        out: dict[str, JobRunRecord] = {}
        if not job_ids:
            return out
        with self._read() as s:
            q = (select(JobRun).where(JobRun.job_id.in_(job_ids))
                 .order_by(JobRun.created_at.desc(), JobRun.attempt.desc()))
            for r in s.scalars(q):
                out.setdefault(r.job_id, _job_run(r))
        return out

    def job_run_of_cell_runs(self, notebook_id: str) -> dict[str, tuple[str, str, str]]:
        """{cell run id: (job id, job name, job run id)} for the notebook's jobs' recent runs ("run by job …")."""
        out: dict[str, tuple[str, str, str]] = {}
        with self._read() as s:
            q = (select(Job.id, Job.name, JobRun.id, JobRun.run_ids).join(Job, Job.id == JobRun.job_id)
                 .where(Job.notebook_id == notebook_id).order_by(JobRun.created_at.desc()).limit(200))
            for job_id, name, run_id, run_ids in s.execute(q):
                for cell_run in run_ids or []:
                    out.setdefault(cell_run, (job_id, name, run_id))
        return out
