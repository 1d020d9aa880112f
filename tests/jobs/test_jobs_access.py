"""Attacks on the jobs endpoints: who may schedule, run, see and change a job, and as whom it runs.

Each request is a real HTTP request to a live server; its user is the one the test names.
"""
from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from console.server.jobs.scheduler import JOBS_KEY
from tests.support.clients import http
from tests.support.jobs import after_runs, jobs_server
from tests.support.live_server import LiveServer
from tests.support.webhooks import Receiver


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with jobs_server(str(tmp_path_factory.mktemp("jobs-access")), JOBS_LEASE_SECONDS=3.0) as server:
        yield server


@pytest.fixture(scope="module")
def world(live: LiveServer) -> dict[str, Any]:
    """alice owns the notebook and a job on it; the others hold what their names say."""
    store = live.store
    users = {n: store.ensure_user(n) for n in ("alice", "mallory", "viewer1", "runner1", "editor1", "reader1")}
    store.set_site_role(users["reader1"].id, "reader")
    nb = live.notebook('set day = "x" where type="defaultParam";', "select '${day}' as d as t;", owner="alice")
    for name, role in (("viewer1", "viewer"), ("runner1", "runner"), ("editor1", "editor"), ("reader1", "viewer")):
        store.set_share(users[name].id, role, notebook_id=nb.id)
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *"}, user="alice")
    assert code == 201, job
    return {"nb": nb, "job": job, "users": users}


def _wait_done(live: LiveServer, job_id: str, n: int) -> list[Any]:
    def done() -> list[Any] | None:
        runs = live.store.job_runs(job_id)
        return runs if len(runs) >= n and all(r.status not in ("queued", "running") for r in runs) else None
    return after_runs(live, done, f"{n} runs of job {job_id} ending")


@pytest.mark.parametrize(("user", "code"), [("mallory", 404), ("viewer1", 403), ("runner1", 403), ("reader1", 403)])
def test_only_editors_schedule_a_notebook(live: LiveServer, world: dict[str, Any], user: str, code: int) -> None:
    got, body = http(live, "POST", "/api/jobs", {"notebook_id": world["nb"].id, "cron": "* * * * *"}, user=user)
    assert got == code, body
    assert not any(j.owner_id == world["users"][user].id for j in live.store.list_jobs())


@pytest.mark.parametrize(("user", "code"), [("mallory", 404), ("viewer1", 403), ("reader1", 403)])
def test_who_is_not_a_runner_cannot_run_a_job(live: LiveServer, world: dict[str, Any], user: str, code: int) -> None:
    before = len(live.store.job_runs(world["job"]["id"]))
    got, body = http(live, "POST", f"/api/jobs/{world['job']['id']}/run", {}, user=user)
    assert got == code, body
    assert len(live.store.job_runs(world["job"]["id"])) == before


def test_strangers_see_nothing_of_a_job(live: LiveServer, world: dict[str, Any]) -> None:
    job_id = world["job"]["id"]
    for method, path in (("GET", f"/api/jobs/{job_id}"), ("GET", f"/api/jobs/{job_id}/runs"),
                         ("PATCH", f"/api/jobs/{job_id}"), ("DELETE", f"/api/jobs/{job_id}")):
        got, _ = http(live, method, path, {} if method == "PATCH" else None, user="mallory")
        assert got == 404, (method, path)
    got, listing = http(live, "GET", "/api/jobs", user="mallory")
    assert got == 200 and listing["jobs"] == []
    got, listing = http(live, "GET", "/api/jobs", user="viewer1")
    assert [j["id"] for j in listing["jobs"]] == [job_id]


def test_only_the_owner_or_the_notebooks_owner_changes_a_job(live: LiveServer, world: dict[str, Any]) -> None:
    job_id = world["job"]["id"]
    got, body = http(live, "PATCH", f"/api/jobs/{job_id}", {"webhook_url": "http://127.0.0.1:9/x"}, user="editor1")
    assert got == 403 and "owner" in body["error"]
    got, _ = http(live, "DELETE", f"/api/jobs/{job_id}", user="editor1")
    assert got == 403
    got, body = http(live, "PATCH", f"/api/jobs/{job_id}", {"retries": 2}, user="viewer1")
    assert got == 403
    got, body = http(live, "PATCH", f"/api/jobs/{job_id}", {"retries": 1}, user="alice")
    assert got == 200 and body["retries"] == 1


def test_a_run_now_by_a_runner_runs_as_the_jobs_owner(live: LiveServer, world: dict[str, Any]) -> None:
    job_id, users = world["job"]["id"], world["users"]
    got, queued = http(live, "POST", f"/api/jobs/{job_id}/run", {"params": {"day": "by-runner"}}, user="runner1")
    assert got == 202 and queued["triggered_by"] == users["runner1"].id
    run = next(r for r in _wait_done(live, job_id, 1) if r.id == queued["id"])
    assert run.status == "done", run.error
    cells = [live.store.get_run(rid) for rid in run.run_ids]
    assert {c.user_id for c in cells} == {users["alice"].id}  # the owner's identity, not the runner's
    assert cells[1].result["rows"] == [["by-runner"]]


def test_removing_the_owners_access_disables_the_job_and_says_why(live: LiveServer, world: dict[str, Any]) -> None:
    store, nb, users = live.store, world["nb"], world["users"]
    got, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 3 * * *", "name": "editors"},
                    user="editor1")
    assert got == 201, job
    (share,) = [s for s in store.list_shares(user_id=users["editor1"].id) if s.notebook_id == nb.id]
    store.set_share(users["editor1"].id, "runner", notebook_id=nb.id)  # demoted below editor
    store.update_job(job["id"], next_run_at=datetime.now(timezone.utc))
    live.app.extensions[JOBS_KEY].wake()
    (run,) = _wait_done(live, job["id"], 1)
    assert run.status == "error" and run.run_ids == [] and "no longer has the editor role" in run.error
    off = store.get_job(job["id"])
    assert not off.enabled and "editor1 no longer has the editor role" in off.disabled_reason
    got, body = http(live, "PATCH", f"/api/jobs/{job['id']}", {"enabled": True}, user="alice")
    assert got == 409 and "cannot be enabled" in body["error"]
    got, body = http(live, "GET", f"/api/jobs/{job['id']}", user="alice")
    assert body["disabled_reason"].startswith("disabled: its owner editor1")
    del share


@pytest.mark.parametrize("url", ["http://127.0.0.1:8265/api/jobs/", "http://[::1]:5000/api/me", "http://0.0.0.0:5000/",
                                 "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/x",
                                 "http://[::ffff:127.0.0.1]/x"])
def test_a_webhook_into_the_servers_own_network_is_refused(live: LiveServer, world: dict[str, Any], url: str) -> None:
    # The POST would come from the server: its API, the Ray dashboard's job submission, a cloud's metadata.
    got, body = http(live, "POST", "/api/jobs", {"notebook_id": world["nb"].id, "cron": "0 2 * * *",
                                                 "webhook_url": url}, user="alice")
    assert got == 400 and "not a public one" in body["error"], body
    got, body = http(live, "PATCH", f"/api/jobs/{world['job']['id']}", {"webhook_url": url}, user="alice")
    assert got == 400 and "CONSOLE_WEBHOOK_PRIVATE" in body["error"], body


def test_a_webhook_name_that_resolves_into_the_servers_network_is_not_called(live: LiveServer,
                                                                             world: dict[str, Any]) -> None:
    hook = Receiver()
    try:
        nb = live.notebook("select * from no_such_table as t;", owner="alice")
        got, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *"}, user="alice")
        assert got == 201, job
        # A name that resolves into the server's network (localhost itself is refused at save now):
        # stored as a DNS name that changed since its save would be, so only the send can refuse it.
        live.store.update_job(job["id"], webhook_url=f"http://localhost:{hook.httpd.server_port}/hook")
        got, _ = http(live, "POST", f"/api/jobs/{job['id']}/run", {}, user="alice")
        (run,) = _wait_done(live, job["id"], 1)
        sent = run.webhook  # recorded before the run's end is reported
        assert sent is not None and not sent["delivered"], sent
        (attempt,) = sent["attempts"]  # refused once, not retried
        assert "not a public address" in attempt["error"] and "resolves to" in attempt["error"], attempt
        assert hook.bodies == []
    finally:
        hook.close()
