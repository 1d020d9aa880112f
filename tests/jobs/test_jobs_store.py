"""The jobs store on SQLite and PostgreSQL: jobs, claims of due occurrences, the one slot, leases."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy.exc import IntegrityError

from console.server.jobs.scheduler import next_of
from console.store import Invalid, NotFound, Store
from console.store.jobs import JobRecord
from console.store.models import JobRun

NOW = datetime(2026, 12, 1, 12, 0, 30, tzinfo=timezone.utc)
LEASE = timedelta(seconds=30)


def _job(store: Store, **kw: object) -> JobRecord:
    owner = store.create_user("owner")
    nb = store.create_notebook("nightly", owner_id=owner.id, cells=[{"kind": "mlsql", "source": "select 1 as a as t;"}])
    args: dict = {"schedule_kind": "cron", "cron": "* * * * *", "next_run_at": NOW - timedelta(seconds=30)}
    args.update(kw)
    return store.create_job(nb.id, owner.id, "nightly", **args)  # type: ignore[arg-type]


def test_a_job_is_stored_changed_and_deleted(store: Store) -> None:
    job = _job(store, params={"day": "2026-12-01"}, retries=2, overlap="queue", webhook_url="http://127.0.0.1:1/x")
    again = store.get_job(job.id)
    assert again.params == {"day": "2026-12-01"} and again.retries == 2 and again.overlap == "queue"
    assert again.enabled and again.next_run_at == NOW - timedelta(seconds=30)
    assert [j.id for j in store.list_jobs(job.notebook_id)] == [job.id]
    off = store.update_job(job.id, enabled=False, disabled_reason="disabled: test")
    assert not off.enabled and off.next_run_at is None and off.disabled_reason == "disabled: test"
    with pytest.raises(Invalid, match="no setting owner_id"):
        store.update_job(job.id, owner_id=5)
    with pytest.raises(Invalid, match="overlap"):
        store.create_job(job.notebook_id, None, "x", schedule_kind="cron", cron="* * * * *", next_run_at=NOW,
                         overlap="both")
    store.delete_job(job.id)
    with pytest.raises(NotFound):
        store.get_job(job.id)


def test_an_occurrence_is_claimed_once_and_the_schedule_moves_on(store: Store) -> None:
    job = _job(store, params={"day": "x"})
    (run,) = store.claim_due(NOW, next_of)
    assert run.trigger == "schedule" and run.status == "queued" and run.params == {"day": "x"}
    assert run.scheduled_for == NOW - timedelta(seconds=30)
    assert store.claim_due(NOW, next_of) == []  # the same moment again: nothing left to claim
    assert store.get_job(job.id).next_run_at == datetime(2026, 12, 1, 12, 1, tzinfo=timezone.utc)
    # the same occurrence cannot be stored twice, whoever tries
    with pytest.raises(IntegrityError), store._write() as s:
        s.add(JobRun(id="dup", job_id=job.id, trigger="schedule", attempt=1, scheduled_for=run.scheduled_for,
                     params={}, run_ids=[], error="", lease_holder=""))


def test_occurrences_missed_while_no_server_ran_fire_once(store: Store) -> None:
    job = _job(store, next_run_at=NOW - timedelta(hours=3))  # 180 missed minutes
    runs = store.claim_due(NOW, next_of)
    assert len(runs) == 1 and runs[0].scheduled_for == NOW - timedelta(hours=3)
    assert store.get_job(job.id).next_run_at == datetime(2026, 12, 1, 12, 1, tzinfo=timezone.utc)
    assert store.claim_due(NOW, next_of) == []


def test_a_disabled_job_does_not_fire(store: Store) -> None:
    job = _job(store)
    store.update_job(job.id, enabled=False)
    assert store.claim_due(NOW + timedelta(hours=1), next_of) == []
    assert store.next_due() is None


def test_one_run_at_a_time_and_overlap_skip_or_queue(store: Store) -> None:
    job = _job(store)
    (first,) = store.claim_due(NOW, next_of)
    assert store.start_job_run(first.id, "a", LEASE) is not None
    assert store.start_job_run(first.id, "b", LEASE) is None  # taken
    (skipped,) = store.claim_due(NOW + timedelta(minutes=1), next_of)
    assert skipped.status == "skipped" and "overlap: skip" in skipped.error
    store.update_job(job.id, overlap="queue")
    (queued,) = store.claim_due(NOW + timedelta(minutes=2), next_of)
    assert queued.status == "queued"
    assert store.start_job_run(queued.id, "a", LEASE) is None  # the slot is the first run's
    assert store.queued_job_runs() == []  # nothing may start while the job runs
    store.finish_job_run(first.id, "done")
    assert [r.id for r in store.queued_job_runs()] == [queued.id]
    assert store.start_job_run(queued.id, "b", LEASE) is not None
    assert store.get_job(job.id).running_run_id == queued.id



def test_a_retry_waits_out_its_delay_and_the_scheduler_wakes_for_it(store: Store) -> None:
    job = _job(store, retry_delay_seconds=30)
    assert store.get_job(job.id).retry_delay_seconds == 30
    (run,) = store.claim_due(NOW, next_of)
    store.start_job_run(run.id, "a", LEASE)
    store.finish_job_run(run.id, "error", "boom")
    store.update_job(job.id, enabled=False)  # no firing: the wait is the only thing due
    retry = store.queue_job_run(job.id, "retry", run.params, attempt=2, scheduled_for=run.scheduled_for,
                                not_before=NOW + timedelta(seconds=30))
    assert store.get_job_run(retry.id).not_before == NOW + timedelta(seconds=30)
    assert store.queued_job_runs(NOW + timedelta(seconds=29)) == []  # still waiting
    assert store.next_due(NOW) == NOW + timedelta(seconds=30)  # what the scheduler sleeps until
    assert [r.id for r in store.queued_job_runs(NOW + timedelta(seconds=30))] == [retry.id]
    # Waited out but not started (its job's slot is taken): not due again, or the scheduler would spin.
    assert store.next_due(NOW + timedelta(seconds=31)) is None
    store.update_job(job.id, enabled=True, next_run_at=NOW + timedelta(seconds=10))
    assert store.next_due(NOW) == NOW + timedelta(seconds=10)  # a firing sooner than the wait comes first

def test_a_run_whose_lease_lapsed_is_interrupted_and_frees_the_job(store: Store) -> None:
    job = _job(store)
    (run,) = store.claim_due(NOW, next_of)
    store.start_job_run(run.id, "dead-server", timedelta(seconds=-1))  # as if it stopped renewing long ago
    assert not store.renew_lease(run.id, "someone-else", LEASE)
    (reaped,) = store.reap_lapsed()
    assert reaped.id == run.id and reaped.status == "interrupted" and "dead-server" in reaped.error
    assert store.get_job(job.id).running_run_id is None
    assert not store.renew_lease(run.id, "dead-server", LEASE)  # too late: it was reaped
    assert store.finish_job_run(run.id, "done").status == "interrupted"  # its server's late word changes nothing


def test_history_newest_first_with_retries(store: Store) -> None:
    job = _job(store)
    (run,) = store.claim_due(NOW, next_of)
    store.start_job_run(run.id, "a", LEASE)
    store.set_job_run(run.id, revision=3, run_ids=["r1", "r2"])
    store.finish_job_run(run.id, "error", "cell c2: boom")
    retry = store.queue_job_run(job.id, "retry", run.params, attempt=2, scheduled_for=run.scheduled_for)
    history = store.job_runs(job.id)
    assert [(r.trigger, r.attempt) for r in history] == [("retry", 2), ("schedule", 1)]
    assert history[1].revision == 3 and history[1].run_ids == ["r1", "r2"] and history[1].error == "cell c2: boom"
    assert store.last_job_runs([job.id])[job.id].id == retry.id
    assert store.job_run_of_cell_runs(job.notebook_id)["r2"] == (job.id, "nightly", run.id)
    with pytest.raises(Invalid):
        store.queue_job_run(job.id, "cron", {})


def test_migration_0007_keeps_every_job_and_its_history(db_url: str) -> None:
    """Upgrading a 0006 database: jobs retry at once as before (a delay of 0), and no job run is
    lost (a copy of `jobs`, which SQLite's batch mode makes for what ALTER cannot do, would cascade
    into job_runs)."""
    from sqlalchemy import text

    from console.store.db import make_engine, migrate

    engine = make_engine(db_url)
    migrate(engine, "0006")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO notebooks (id, name, folder, revision, created_at, updated_at) "
                          "VALUES ('n1', 'nb', '/', 1, '2026-01-01', '2026-01-01')"))
        conn.execute(text(
            "INSERT INTO jobs (id, name, notebook_id, schedule_kind, cron, timezone, params, retries, timeout_seconds,"
            " overlap, webhook_url, notify_success, enabled, disabled_reason, created_at, updated_at) VALUES "
            "('j1', 'nightly', 'n1', 'cron', '0 2 * * *', 'UTC', '{}', 2, 60, 'skip', '', false, true, '',"
            " '2026-01-01', '2026-01-01')"))
        conn.execute(text(
            "INSERT INTO job_runs (id, job_id, trigger, attempt, status, created_at, params, run_ids, error,"
            " lease_holder) VALUES ('r1', 'j1', 'schedule', 1, 'error', '2026-01-01', '{}', '[]', 'boom', '')"))
    engine.dispose()
    store = Store(db_url)  # migrates to the head
    try:
        job = store.get_job("j1")
        assert (job.retries, job.retry_delay_seconds) == (2, 0)
        (run,) = store.job_runs("j1")
        assert (run.id, run.error, run.not_before) == ("r1", "boom", None)
    finally:
        store.close()
