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
    ({"params": {"day": "a\x00b"}}, "params.'day'"),
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
