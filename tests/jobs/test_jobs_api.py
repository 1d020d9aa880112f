"""Jobs over the API against a live server: real kernels, the real scheduler, a real webhook receiver.

Firings are made due at once (the job's next_run_at set to now, the scheduler woken) instead of
waiting for the next minute; the claim, the run and the history are the ones a cron firing takes.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from console.server.scheduler import JOBS_KEY
from tests.support.clients import http
from tests.support.live_server import LiveServer
from tests.support.webhooks import Receiver

PARAM_NB = ('set day = "x" where type="defaultParam";', "select '${day}' as d as t;")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Its webhook receivers listen on loopback, which a server calls only when told it may.
    server = LiveServer(str(tmp_path_factory.mktemp("jobs-data")), JOBS_LEASE_SECONDS=3.0, WEBHOOK_PRIVATE=True)
    server.app.extensions[JOBS_KEY].start()
    try:
        yield server
    finally:
        server.app.extensions[JOBS_KEY].stop()
        server.close()


def _fire(live: LiveServer, job_id: str) -> None:
    live.store.update_job(job_id, next_run_at=datetime.now(timezone.utc))
    live.app.extensions[JOBS_KEY].wake()


def _runs_when(live: LiveServer, job_id: str, done: Any, timeout: float = 90.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code, body = http(live, "GET", f"/api/jobs/{job_id}/runs")
        assert code == 200, body
        if done(body["runs"]):
            return body["runs"]  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(f"job runs did not get there in {timeout:.0f} s: {body}")


def _settled(runs: list[dict[str, Any]], n: int) -> bool:
    return len(runs) >= n and all(r["status"] not in ("queued", "running") for r in runs)


def _texts(run: dict[str, Any]) -> str:
    return json.dumps([o["events"] for o in run["outputs"]])


def test_a_scheduled_job_runs_with_its_parameters_as_a_stored_run(live: LiveServer) -> None:
    nb = live.notebook(*PARAM_NB)
    # Once a year, so only the forced firing runs: an every-minute cron also fired on its own when the
    # first run outlasted a minute's turn on a loaded machine (two runs where the test takes one).
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "name": "nightly", "cron": "0 0 1 1 *",
                                                 "params": {"day": "2026-12-01"}})
    assert code == 201, job
    assert job["enabled"] and len(job["schedule"]["readable"]) == 3 and job["next_run_at"]
    _fire(live, job["id"])
    (run,) = _runs_when(live, job["id"], lambda rs: _settled(rs, 1))
    assert run["status"] == "done" and run["trigger"] == "schedule" and run["params"] == {"day": "2026-12-01"}
    assert run["revision"] == live.store.get_notebook(nb.id).revision and run["scheduled_for"]
    assert len(run["outputs"]) == 2 and '"2026-12-01"' in _texts(run)
    # its cell runs are the notebook's stored runs, and the page can say which job made them
    code, page = http(live, "GET", f"/api/notebooks/{nb.id}/jobs")
    assert page["cell_runs"][run["run_ids"][1]] == {"job": "nightly", "job_id": job["id"], "job_run": run["id"]}
    code, latest = http(live, "GET", f"/api/notebooks/{nb.id}/runs")
    assert latest["runs"][nb.cells[1].id]["id"] == run["run_ids"][1]
    # the schedule moved on a minute; a second firing runs again
    assert live.store.get_job(job["id"]).next_run_at > datetime.now(timezone.utc)
    _fire(live, job["id"])
    runs = _runs_when(live, job["id"], lambda rs: _settled(rs, 2))
    assert [r["status"] for r in runs] == ["done", "done"]
    # disabled: nothing fires, even when it was due
    code, off = http(live, "PATCH", f"/api/jobs/{job['id']}", {"enabled": False})
    assert code == 200 and not off["enabled"] and off["next_run_at"] is None
    assert live.app.extensions[JOBS_KEY].tick() == []  # one pass, synchronously: it claims and starts nothing
    code, body = http(live, "GET", f"/api/jobs/{job['id']}/runs")
    assert len(body["runs"]) == 2


def test_a_failing_job_stops_at_the_failing_cell_retries_and_calls_the_webhook_once(live: LiveServer) -> None:
    hook = Receiver(codes=[503])  # the first delivery fails: it is retried
    live.app.extensions[JOBS_KEY].runner.webhook_backoff = 0.1
    try:
        nb = live.notebook("select 1 as one as t1;", "select * from no_such_table as t2;", "select 3 as c as t3;")
        code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "name": "broken", "every_minutes": 60,
                                                     "retries": 1, "webhook_url": hook.url})
        assert code == 201, job
        _fire(live, job["id"])
        runs = _runs_when(live, job["id"], lambda rs: _settled(rs, 2) and rs[0].get("webhook"))
        retry, first = runs
        assert (first["trigger"], first["attempt"], retry["trigger"], retry["attempt"]) == ("schedule", 1, "retry", 2)
        for r in runs:
            assert r["status"] == "error" and "no_such_table" in r["error"] and "cell 2 (" in r["error"]
            assert [o["cell_id"] for o in r["outputs"]] == [nb.cells[0].id, nb.cells[1].id]  # cell 3 never ran
        assert [t.cell_id for t in live.store.latest_runs(nb.id).values()].count(nb.cells[2].id) == 0
        time.sleep(0.5)
        assert len(hook.bodies) == 2  # one delivery, answered 503 once and then 200
        sent = hook.bodies[-1]
        assert sent["status"] == "error" and sent["job"] == {"id": job["id"], "name": "broken"}
        assert sent["run"]["id"] == retry["id"] and "no_such_table" in sent["error"] and "\n" not in sent["error"]
        assert sent["notebook"]["id"] == nb.id and sent["link"].endswith(f"run={retry['id']}")
        assert retry["webhook"]["delivered"] and [a.get("status") for a in retry["webhook"]["attempts"]] == [503, 200]
        assert first["webhook"] is None
    finally:
        hook.close()



def test_a_retry_starts_after_the_jobs_retry_delay(live: LiveServer) -> None:
    nb = live.notebook("select * from no_such_table as t;")
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "every_minutes": 60, "retries": 1,
                                                 "retry_delay_seconds": 4})
    assert code == 201 and job["retry_delay_seconds"] == 4, job
    _fire(live, job["id"])
    waiting, first = _runs_when(live, job["id"], lambda rs: len(rs) == 2)
    if waiting["status"] == "queued":  # seen while it waits: the history says when it may start
        assert waiting["not_before"] and waiting["started_at"] is None
    retry, first = _runs_when(live, job["id"], lambda rs: _settled(rs, 2))
    assert (retry["trigger"], retry["attempt"], retry["status"]) == ("retry", 2, "error")
    waited = datetime.fromisoformat(retry["started_at"]) - datetime.fromisoformat(first["ended_at"])
    assert waited.total_seconds() >= 4, waited
    assert datetime.fromisoformat(retry["started_at"]) >= datetime.fromisoformat(retry["not_before"])

def test_a_job_past_its_timeout_is_interrupted(live: LiveServer) -> None:
    nb = live.notebook("--script\nsleep 30\n", "select 2 as b as t;")
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "every_minutes": 60, "timeout_seconds": 2})
    assert code == 201, job
    code, queued = http(live, "POST", f"/api/jobs/{job['id']}/run", {})
    assert code == 202 and queued["trigger"] == "manual"
    _runs_when(live, job["id"], lambda rs: rs and rs[0]["run_ids"], timeout=60)
    # the job's own kernel is not the notebook's: the page's kernel list does not show it
    code, kernels = http(live, "GET", f"/api/notebooks/{nb.id}/kernel")
    assert code == 200 and kernels["kernels"] == []
    (run,) = _runs_when(live, job["id"], lambda rs: _settled(rs, 1), timeout=60)
    assert run["status"] == "timeout" and "timed out after 2 s" in run["error"] and len(run["run_ids"]) == 1


def test_unknown_parameters_are_refused_with_the_declared_ones(live: LiveServer) -> None:
    nb = live.notebook(*PARAM_NB)
    code, body = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *", "params": {"dya": "1"}})
    assert code == 400 and body["error"] == "unknown parameter dya: this notebook declares day"
    assert body["declared"] == ["day"]
    code, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True, "params": {"dya": "1"}})
    assert code == 400 and body["declared"] == ["day"]
    code, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True, "params": {"day": 5}})
    assert code == 400 and "params.day must be a string" in body["error"]
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *"})
    code, body = http(live, "POST", f"/api/jobs/{job['id']}/run", {"params": {"month": "12"}})
    assert code == 400 and "declares day" in body["error"]
    code, body = http(live, "GET", f"/api/notebooks/{nb.id}/params")
    assert body == {"params": [{"name": "day", "default": "x", "cell": 0}]}


def test_the_notebook_run_endpoint_takes_parameters(live: LiveServer) -> None:
    nb = live.notebook(*PARAM_NB)
    code, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True, "params": {"day": "typed"}})
    assert code == 202, body
    deadline = time.monotonic() + 60
    while live.store.get_run(body["run_ids"][1]).status not in ("done", "error") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert live.store.get_run(body["run_ids"][1]).result["rows"] == [["typed"]]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("cron", "61 * * * *", "higher than the maximum"),
    ("retries", 11, "'retries' must be between 0 and 10"),
    ("retry_delay_seconds", 86401, "'retry_delay_seconds' must be between 0 and 86400"),
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


@pytest.mark.slow
def test_an_every_minute_cron_fires_on_its_own_twice_then_stops_when_disabled(live: LiveServer) -> None:
    """The 'done when' of the feature, on the wall clock: no firing is forced here."""
    nb = live.notebook(*PARAM_NB)
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "* * * * *",
                                                 "params": {"day": "2026-12-01"}})
    assert code == 201, job
    first = _runs_when(live, job["id"], lambda rs: _settled(rs, 1), timeout=75)
    assert first[0]["trigger"] == "schedule" and '"2026-12-01"' in _texts(first[0])
    runs = _runs_when(live, job["id"], lambda rs: _settled(rs, 2), timeout=75)
    due = sorted(datetime.fromisoformat(r["scheduled_for"]) for r in runs)
    assert (due[1] - due[0]).total_seconds() == 60
    http(live, "PATCH", f"/api/jobs/{job['id']}", {"enabled": False})
    time.sleep(65)
    code, body = http(live, "GET", f"/api/jobs/{job['id']}/runs")
    assert len(body["runs"]) == 2
