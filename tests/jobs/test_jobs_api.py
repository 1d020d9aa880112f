"""Jobs over the API against a live server: real kernels, the real scheduler, a real webhook receiver.

The server's clock is a MovableClock (console/clock.py): the scheduler, the runs' timeouts, the
retries' delays and the webhook's backoff wait on it, and a test moves it instead of waiting (a
cron's next minute, a retry's delay). Some firings are made due at once (the job's next_run_at
set to the clock's now, the scheduler woken); the claim, the run and the history are the ones a
cron firing takes, and the every-minute cron below fires on its own, by the scheduler's loop.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from console.clock import MovableClock
from console.server.jobs.scheduler import JOBS_KEY
from tests.support.clients import Viewer, http, join
from tests.support.jobs import a_pass_since, after_runs, jobs_server
from tests.support.live_server import LiveServer
from tests.support.webhooks import Receiver

PARAM_NB = ('set day = "x" where type="defaultParam";', "select '${day}' as d as t;")


@pytest.fixture(scope="module")
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, clock: MovableClock) -> Iterator[LiveServer]:
    # Its webhook receivers listen on loopback, which a server calls only when told it may.
    with jobs_server(str(tmp_path_factory.mktemp("jobs-data")), JOBS_LEASE_SECONDS=3.0, WEBHOOK_PRIVATE=True,
                     CLOCK=clock) as server:
        yield server


def _fire(live: LiveServer, clock: MovableClock, job_id: str) -> None:
    live.store.update_job(job_id, next_run_at=clock.now())
    live.app.extensions[JOBS_KEY].wake()


def _runs_when(live: LiveServer, job_id: str, done: Any) -> list[dict[str, Any]]:
    """The job's runs (newest first) once `done(runs)`, looked at whenever the scheduler reports a change."""
    def runs() -> list[dict[str, Any]] | None:
        code, body = http(live, "GET", f"/api/jobs/{job_id}/runs")
        assert code == 200, body
        return body["runs"] if done(body["runs"]) else None  # type: ignore[no-any-return]
    return after_runs(live, runs, f"the runs of job {job_id}")


def _settled(runs: list[dict[str, Any]], n: int) -> bool:
    return len(runs) >= n and all(r["status"] not in ("queued", "running") for r in runs)


def _texts(run: dict[str, Any]) -> str:
    return json.dumps([o["events"] for o in run["outputs"]])


def test_a_scheduled_job_runs_with_its_parameters_as_a_stored_run(live: LiveServer, clock: MovableClock) -> None:
    nb = live.notebook(*PARAM_NB)
    # Once a year, so only the forced firing runs: an every-minute cron also fired on its own when the
    # first run outlasted a minute's turn on a loaded machine (two runs where the test takes one).
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "name": "nightly", "cron": "0 0 1 1 *",
                                                 "params": {"day": "2026-12-01"}})
    assert code == 201, job
    assert job["enabled"] and len(job["schedule"]["readable"]) == 3 and job["next_run_at"]
    watcher = Viewer(live.url)  # a page open on the notebook while the job runs
    join(watcher, nb)
    _fire(live, clock, job["id"])
    (run,) = _runs_when(live, job["id"], lambda rs: _settled(rs, 1))
    assert run["status"] == "done" and run["trigger"] == "schedule" and run["params"] == {"day": "2026-12-01"}
    assert run["revision"] == live.store.get_notebook(nb.id).revision and run["scheduled_for"]
    assert len(run["outputs"]) == 2 and '"2026-12-01"' in _texts(run)
    # each of its cell runs keeps a manifest with the job run's parameters and revision (issue 32)
    for run_id in run["run_ids"]:
        code, manifest = http(live, "GET", f"/api/runs/{run_id}/manifest")
        assert code == 200 and manifest["recorded"], manifest
        assert manifest["params"] == {"day": "2026-12-01"} and manifest["revision"] == run["revision"]
    # its cell runs are the notebook's stored runs, and the page can say which job made them
    code, page = http(live, "GET", f"/api/notebooks/{nb.id}/jobs")
    assert page["cell_runs"][run["run_ids"][1]] == {"job": "nightly", "job_id": job["id"], "job_run": run["id"]}
    # and the open page learned it live, on each of the run's cell_status events (no polling)
    ended = watcher.wait_status(run["run_ids"][1], "done")
    assert (ended["job_id"], ended["job_name"]) == (job["id"], "nightly")
    watcher.close()
    code, latest = http(live, "GET", f"/api/notebooks/{nb.id}/runs")
    assert latest["runs"][nb.cells[1].id]["id"] == run["run_ids"][1]
    # the schedule moved on a minute; a second firing runs again
    assert live.store.get_job(job["id"]).next_run_at > clock.now()
    clock.advance(1)  # a firing is one per moment (the store's key): this one is a second later
    _fire(live, clock, job["id"])
    runs = _runs_when(live, job["id"], lambda rs: _settled(rs, 2))
    assert [r["status"] for r in runs] == ["done", "done"]
    # disabled: nothing fires, even when it was due
    code, off = http(live, "PATCH", f"/api/jobs/{job['id']}", {"enabled": False})
    assert code == 200 and not off["enabled"] and off["next_run_at"] is None
    assert live.app.extensions[JOBS_KEY].tick() == []  # one pass, synchronously: it claims and starts nothing
    code, body = http(live, "GET", f"/api/jobs/{job['id']}/runs")
    assert len(body["runs"]) == 2


def test_a_failing_job_stops_at_the_failing_cell_retries_and_calls_the_webhook_once(
        live: LiveServer, clock: MovableClock) -> None:
    hook = Receiver(codes=[503])  # the first delivery fails: it is retried after the backoff
    try:
        nb = live.notebook("select 1 as one as t1;", "select * from no_such_table as t2;", "select 3 as c as t3;")
        code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "name": "broken", "every_minutes": 60,
                                                     "retries": 1, "webhook_url": hook.url})
        assert code == 201, job
        _fire(live, clock, job["id"])
        hook.wait(1)
        clock.wait_sleeping(2)  # the scheduler, and the run waiting out the webhook's backoff
        # The clock stands still: the second try waits out the backoff (1 s) until the clock moves.
        assert len(hook.bodies) == 1 and live.store.job_runs(job["id"])[0].webhook is None
        clock.advance(live.app.extensions[JOBS_KEY].runner.webhook_backoff)
        runs = _runs_when(live, job["id"], lambda rs: _settled(rs, 2) and rs[0].get("webhook"))
        retry, first = runs
        assert (first["trigger"], first["attempt"], retry["trigger"], retry["attempt"]) == ("schedule", 1, "retry", 2)
        for r in runs:
            assert r["status"] == "error" and "no_such_table" in r["error"] and "cell 2 (" in r["error"]
            assert [o["cell_id"] for o in r["outputs"]] == [nb.cells[0].id, nb.cells[1].id]  # cell 3 never ran
        assert [t.cell_id for t in live.store.latest_runs(nb.id).values()].count(nb.cells[2].id) == 0
        # The delivery is recorded after its last try: what the receiver has is all it gets.
        assert len(hook.bodies) == 2  # one delivery, answered 503 once and then 200
        sent = hook.bodies[-1]
        assert sent["status"] == "error" and sent["job"] == {"id": job["id"], "name": "broken"}
        assert sent["run"]["id"] == retry["id"] and "no_such_table" in sent["error"] and "\n" not in sent["error"]
        assert sent["notebook"]["id"] == nb.id and sent["link"].endswith(f"run={retry['id']}")
        assert retry["webhook"]["delivered"] and [a.get("status") for a in retry["webhook"]["attempts"]] == [503, 200]
        assert first["webhook"] is None
    finally:
        hook.close()


def test_a_retry_starts_after_the_jobs_retry_delay(live: LiveServer, clock: MovableClock) -> None:
    nb = live.notebook("select * from no_such_table as t;")
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "every_minutes": 60, "retries": 1,
                                                 "retry_delay_seconds": 4})
    assert code == 201 and job["retry_delay_seconds"] == 4, job
    _fire(live, clock, job["id"])
    waiting, first = _runs_when(live, job["id"], lambda rs: len(rs) == 2)
    # The clock has not moved: the retry waits, and the history says until when.
    assert first["status"] == "error" and waiting["status"] == "queued" and waiting["started_at"] is None
    ended = datetime.fromisoformat(first["ended_at"])
    assert datetime.fromisoformat(waiting["not_before"]) == ended + timedelta(seconds=4)
    clock.advance(3.9)
    a_pass_since(live, clock.now())
    assert live.store.get_job_run(waiting["id"]).status == "queued"  # not a moment early
    clock.advance(0.1)
    retry, first = _runs_when(live, job["id"], lambda rs: _settled(rs, 2))
    assert (retry["trigger"], retry["attempt"], retry["status"]) == ("retry", 2, "error")
    # It started when its wait ended, on the scheduler's own (the clock was moved, not the job)
    assert datetime.fromisoformat(retry["started_at"]) == ended + timedelta(seconds=4)


def test_a_job_past_its_timeout_is_interrupted(live: LiveServer, clock: MovableClock) -> None:
    nb = live.notebook("--script\nsleep 30\n", "select 2 as b as t;")
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "every_minutes": 60, "timeout_seconds": 2})
    assert code == 201, job
    code, queued = http(live, "POST", f"/api/jobs/{job['id']}/run", {})
    assert code == 202 and queued["trigger"] == "manual"
    _runs_when(live, job["id"], lambda rs: rs and rs[0]["run_ids"])
    # the job's own kernel is not the notebook's: the page's kernel list does not show it
    code, kernels = http(live, "GET", f"/api/notebooks/{nb.id}/kernel")
    assert code == 200 and kernels["kernels"] == []
    clock.advance(2)  # the job's timeout, on its clock (the cell sleeps 30 s of real time)
    (run,) = _runs_when(live, job["id"], lambda rs: _settled(rs, 1))
    assert run["status"] == "timeout" and "timed out after 2 s" in run["error"] and len(run["run_ids"]) == 1


def test_unknown_parameters_are_refused_with_the_declared_ones(live: LiveServer) -> None:
    nb = live.notebook(*PARAM_NB)
    code, body = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *", "params": {"dya": "1"}})
    assert code == 400 and body["error"] == "unknown parameter dya: this notebook declares day"
    assert body["declared"] == ["day"]
    code, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True, "params": {"dya": "1"}})
    assert code == 400 and body["declared"] == ["day"]
    code, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True, "params": {"day": 5}})
    assert code == 400 and "'params.day' must be a string" in body["error"]
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *"})
    code, body = http(live, "POST", f"/api/jobs/{job['id']}/run", {"params": {"month": "12"}})
    assert code == 400 and "declares day" in body["error"]
    code, body = http(live, "GET", f"/api/notebooks/{nb.id}/params")
    assert body["params"] == [{"name": "day", "default": "x", "cell": 0}]
    # A job made with no settings is what job_defaults promised the dialog.
    defaults = body["job_defaults"]
    assert defaults["retries"] == job["retries"] == 0 and defaults["timeout_seconds"] == job["timeout_seconds"] == 3600
    assert defaults["overlap"] == job["overlap"] == "skip" and defaults["enabled"] is job["enabled"] is True


def test_the_notebook_run_endpoint_takes_parameters(live: LiveServer) -> None:
    nb = live.notebook(*PARAM_NB)
    page = Viewer(live.url)  # the notebook's page: the run's end is an event it gets
    try:
        join(page, nb)
        code, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True, "params": {"day": "typed"}})
        assert code == 202, body
        page.wait_status(body["run_ids"][1], "done", "error", "interrupted", "cancelled")
    finally:
        page.close()
    assert live.store.get_run(body["run_ids"][1]).result["rows"] == [["typed"]]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("cron", "61 * * * *", "higher than the maximum"),
    ("retries", 11, "'retries' must be 0 to 10"),
    ("retry_delay_seconds", 86401, "'retry_delay_seconds' must be 0 to 86400"),
    ("overlap", "both", "'overlap' must be one of skip, queue"),
    ("webhook_url", "file:///etc/passwd", "'webhook_url' must be an http"),
    ("owner_id", 1, "unknown field owner_id"),
    ("timeout_seconds", "10", "'timeout_seconds' must be an integer"),
])
def test_bad_job_bodies_are_refused_by_name(live: LiveServer, field: str, value: Any, message: str) -> None:
    nb = live.notebook("select 1 as a as t;")
    body = {"notebook_id": nb.id, "every_minutes": 5, field: value}
    if field == "cron":
        body.pop("every_minutes")
    code, answer = http(live, "POST", "/api/jobs", body)
    assert code == 400 and message in answer["error"], answer


def test_the_schedule_preview_gives_three_readable_times(live: LiveServer) -> None:
    code, body = http(live, "GET", "/api/jobs/preview?cron=0+2+*+*+*&timezone=Europe/Paris")
    assert code == 200 and body["description"] == "cron 0 2 * * * (Europe/Paris)"
    assert len(body["readable"]) == 3 and all(", 02:00 CE" in t for t in body["readable"])
    code, body = http(live, "GET", "/api/jobs/preview?cron=0+25+*+*+*")
    assert code == 400 and "higher than the maximum" in body["error"]


def test_an_every_minute_cron_fires_on_its_own_twice_then_stops_when_disabled(
        live: LiveServer, clock: MovableClock) -> None:
    """The 'done when' of the feature: no firing is forced here; the clock moves, the loop fires."""
    nb = live.notebook(*PARAM_NB)
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "* * * * *",
                                                 "params": {"day": "2026-12-01"}})
    assert code == 201, job
    due = datetime.fromisoformat(job["next_run_at"])
    assert due.second == 0 and timedelta(0) < due - clock.now() <= timedelta(minutes=1)  # the next minute
    clock.advance_to(due - timedelta(seconds=1))
    a_pass_since(live, clock.now())
    assert http(live, "GET", f"/api/jobs/{job['id']}/runs")[1]["runs"] == []  # not due yet
    clock.advance_to(due)
    first = _runs_when(live, job["id"], lambda rs: _settled(rs, 1))
    assert first[0]["trigger"] == "schedule" and first[0]["status"] == "done"
    assert '"2026-12-01"' in _texts(first[0])
    clock.advance_to(due + timedelta(minutes=1))
    runs = _runs_when(live, job["id"], lambda rs: _settled(rs, 2))
    assert [r["trigger"] for r in runs] == ["schedule", "schedule"] and [r["status"] for r in runs] == ["done"] * 2
    assert sorted(datetime.fromisoformat(r["scheduled_for"]) for r in runs) == [due, due + timedelta(minutes=1)]
    code, off = http(live, "PATCH", f"/api/jobs/{job['id']}", {"enabled": False})
    assert code == 200 and not off["enabled"]
    clock.advance(65)
    a_pass_since(live, clock.now())  # the scheduler looked after the third minute was due
    code, body = http(live, "GET", f"/api/jobs/{job['id']}/runs")
    assert len(body["runs"]) == 2
