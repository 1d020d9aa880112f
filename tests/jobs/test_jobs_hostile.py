"""Hostile job bodies through a live server: what used to answer 500 or slip past the webhook's
address check answers a 400 naming the field (console/server/jobs/jobs.py, schedule.py, webhook.py)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.clients import http
from tests.support.jobs import after_runs, jobs_server
from tests.support.live_server import LiveServer
from tests.support.webhooks import Receiver


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with jobs_server(str(tmp_path_factory.mktemp("jobs-hostile")), JOBS_LEASE_SECONDS=3.0) as server:
        yield server


@pytest.fixture(scope="module")
def nb(live: LiveServer) -> Any:
    return live.notebook('set day = "x" where type="defaultParam";', "select '${day}' as d as t;", owner="alice")


def _create(live: LiveServer, nb: Any, **fields: Any) -> tuple[int, Any]:
    return http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *", **fields}, user="alice")


@pytest.mark.parametrize(("fields", "names"), [
    ({"timezone": "x" * 100_000}, "time zone"),
    ({"timezone": "Europe/" + "a" * 300}, "time zone"),
    ({"webhook_url": "http://[::1/x"}, "webhook_url"),
    ({"webhook_url": "http://example.com:99999/x"}, "webhook_url"),
    ({"webhook_url": "http://example.com:x/x"}, "webhook_url"),
    ({"webhook_url": "http://exa mple.com/x"}, "webhook_url"),
    ({"webhook_url": "http:///x"}, "webhook_url"),
    ({"webhook_url": "http://\x00/x"}, "webhook_url"),
    ({"name": "a\x00b"}, "'name'"),
    ({"params": {"day": "a\x00b"}}, "'params.day' holds a NUL"),
])
def test_a_hostile_field_is_a_400_naming_it(live: LiveServer, nb: Any, fields: dict[str, Any], names: str) -> None:
    status, body = _create(live, nb, **fields)
    assert status == 400 and names in body["error"], body
    assert len(body["error"]) < 400  # a message, not the 100,000 characters sent back
    status, body = http(live, "GET", f"/api/jobs/preview?cron=0+2+*+*+*&timezone={'x' * 5000}", user="alice")
    assert status == 400 and "time zone" in body["error"], body


LOOPBACK_SPELLINGS = ["2130706433", "0x7f000001", "127.1", "0177.0.0.1", "0x7f.1", "LOCALHOST.", "localhost",
                      "app.localhost", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]", "0",
                      "[64:ff9b::a9fe:a9fe]", "[2002:a00:1::]", "167772161", "0xa9.0xfe.0xa9.0xfe", "127.0.0.1."]


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_every_spelling_of_an_internal_address_is_refused_at_save(live: LiveServer, nb: Any, host: str) -> None:
    # As the resolver (inet_aton) reads them: 127.0.0.1, 10.0.0.1, 169.254.169.254 (a cloud's metadata).
    url = f"http://{host}:5000/api/me"
    status, body = _create(live, nb, webhook_url=url)
    assert status == 400 and "not a public one" in body["error"], body


def test_a_public_address_is_still_taken(live: LiveServer, nb: Any) -> None:
    for url in ("https://hooks.example.com/x", "http://93.184.216.34/x", "http://[2606:4700::1111]/x"):
        status, body = _create(live, nb, webhook_url=url)
        assert status == 201, body


@pytest.mark.parametrize(("stored", "said"), [("http://2130706433:{port}/hook", "not a public address"),
                                             ("http://127.0.0.1:{port}x/hook", "webhook_url")])
def test_a_stored_webhook_in_another_spelling_is_not_called_at_delivery(live: LiveServer, nb: Any, stored: str,
                                                                        said: str) -> None:
    # Saved before this check existed (or under CONSOLE_WEBHOOK_PRIVATE): the send checks it again,
    # and a URL that is none is an attempt refused, not a crash of the job run.
    hook = Receiver()
    try:
        failing = live.notebook("select * from no_such_table as t;", owner="alice")
        status, job = http(live, "POST", "/api/jobs", {"notebook_id": failing.id, "cron": "0 2 * * *"}, user="alice")
        assert status == 201, job
        live.store.update_job(job["id"], webhook_url=stored.format(port=hook.httpd.server_port))
        status, _ = http(live, "POST", f"/api/jobs/{job['id']}/run", {}, user="alice")
        assert status == 202
        def delivered() -> Any:
            runs = live.store.job_runs(job["id"])
            return runs[0].webhook if runs else None
        sent = after_runs(live, delivered, "the webhook's delivery recorded")
        assert sent is not None and not sent["delivered"], sent
        assert said in sent["attempts"][0]["error"], sent
        assert live.store.job_runs(job["id"])[0].status == "error"  # the run itself ended as it did
        assert hook.bodies == []
    finally:
        hook.close()


FIELDS = ("notebook_id, name, cron, every_minutes, timezone, params, retries, retry_delay_seconds, timeout_seconds, "
          "overlap, webhook_url, notify_success, enabled")


@pytest.mark.parametrize(("fields", "says"), [
    ({"retries": "3"}, "'retries' must be an integer"),
    ({"retries": True}, "'retries' must be an integer"),
    ({"retries": 1.5}, "'retries' must be an integer"),
    ({"timeout_seconds": 10**9}, "'timeout_seconds' must be 1 to 604800"),
    ({"timeout_seconds": 2**80}, "'timeout_seconds' is an integer outside the 64-bit range"),
    ({"enabled": 1}, "'enabled' must be true or false"),
    ({"notify_success": "yes"}, "'notify_success' must be true or false"),
    ({"cron": ["0 2 * * *"]}, "'cron' must be a string"),
    ({"notebook_id": {"id": 1}}, "'notebook_id' must be a string"),
    ({"overlap": {"skip": True}}, "'overlap' must be one of skip, queue"),
    ({"name": " " * 3}, "'name' must be 1 to 255 characters"),
    ({"name": "n" * 256}, "'name' must be 1 to 255 characters"),
    ({"owner_id": 1, "secret": {"a": [1]}}, f"unknown fields owner_id, secret; this body takes {FIELDS}"),
    ({"params": ["day"]}, "'params' must be an object"),
    ({"params": {"day": {"nested": [[{"junk": 1}]]}}}, "'params.day' must be a string"),
    ({"params": {"day": None}}, "'params.day' must be a string"),
    ({"params": {"day": 2**80}}, "is an integer outside the 64-bit range"),
    ({"params": {"d\x00y": "1"}}, "'params' has a name holding a NUL character"),
])
def test_a_job_body_of_the_wrong_shape_is_a_400_naming_the_field(live: LiveServer, nb: Any, fields: dict[str, Any],
                                                                  says: str) -> None:
    """Create, change and run now decode their bodies alike (body_as and JobBody): each wrong value is
    refused by name, before anything is stored or queued."""
    status, body = _create(live, nb, **fields)
    assert status == 400 and says in body["error"], body
    status, job = _create(live, nb)
    assert status == 201, job
    if "notebook_id" not in fields:  # a PATCH names the job in its URL
        status, body = http(live, "PATCH", f"/api/jobs/{job['id']}", fields, user="alice")
        assert status == 400 and says in body["error"], body
    assert live.store.get_job(job["id"]).retries == 0  # nothing changed
    if "params" in fields:
        status, body = http(live, "POST", f"/api/jobs/{job['id']}/run", {"params": fields["params"]}, user="alice")
        assert status == 400 and says in body["error"], body
    assert live.store.job_runs(job["id"]) == []


def test_run_now_takes_only_params(live: LiveServer, nb: Any) -> None:
    status, job = _create(live, nb)
    assert status == 201, job
    status, body = http(live, "POST", f"/api/jobs/{job['id']}/run", {"param": {"day": "1"}}, user="alice")
    assert status == 400 and body["error"] == "unknown field param; this body takes params", body
    status, body = http(live, "POST", f"/api/jobs/{job['id']}/run", {"params": None}, user="alice")
    assert status == 202, body  # null: the job's own parameters


def test_a_patch_keeps_what_it_leaves_out_or_sends_as_null(live: LiveServer, nb: Any) -> None:
    status, job = _create(live, nb, name="nightly", retries=2, webhook_url="https://hooks.example.com/x",
                          params={"day": "1"})
    assert status == 201, job
    status, after = http(live, "PATCH", f"/api/jobs/{job['id']}",
                         {"name": None, "retries": None, "webhook_url": None, "params": None, "cron": None,
                          "timezone": None, "enabled": None, "timeout_seconds": 60}, user="alice")
    assert status == 200, after
    kept = ("name", "retries", "webhook_url", "params", "cron", "timezone", "enabled", "next_run_at")
    assert {k: after[k] for k in kept} == {k: job[k] for k in kept} and after["timeout_seconds"] == 60
    status, after = http(live, "PATCH", f"/api/jobs/{job['id']}", {"every_minutes": 5, "webhook_url": ""},
                         user="alice")
    assert status == 200 and after["cron"] == "" and after["every_minutes"] == 5 and after["webhook_url"] == "", after
    status, body = http(live, "PATCH", f"/api/jobs/{job['id']}", {"cron": "0 2 * * *", "every_minutes": 5},
                        user="alice")
    assert status == 400 and "give a schedule" in body["error"], body
