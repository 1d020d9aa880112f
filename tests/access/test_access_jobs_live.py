"""jobs_changed for the Jobs page (console/server/live/jobwatch.py): a socket that sent watch_jobs is
told when a job, or a run of it, of a notebook its user may view changes, and of nothing else; a
share taken away stops the events at once (the access is checked per event, not per room)."""
from __future__ import annotations

from typing import Any

from flask import Flask

from console.server.jobs.scheduler import JOBS_KEY

from security_support import login


def _socket(app: Flask, name: str, watch: bool = True) -> Any:
    client = login(app, name)
    sock = app.extensions["socketio"].test_client(app, flask_test_client=client, auth={"csrf": client.csrf_token})
    assert sock.is_connected()
    if watch:
        ack = sock.emit("command", {"type": "watch_jobs"}, callback=True)
        assert ack == {"ok": True}, ack
    return sock


def _told(sock: Any) -> list[tuple[str, str, str]]:
    return [(e["args"][0]["notebook_id"], e["args"][0]["job_id"], e["args"][0]["change"])
            for e in sock.get_received() if e["name"] == "event" and e["args"][0]["type"] == "jobs_changed"]


def test_watchers_who_may_view_the_notebook_are_told_and_no_one_else(mu_app: Flask) -> None:
    alice = login(mu_app, "alice")
    r = alice.post("/api/notebooks", json={"name": "nightly", "cells": [{"kind": "mlsql", "source": "select 1 as a;"}]})
    assert r.status_code == 201, r.json
    nb = r.json["id"]
    share = alice.post(f"/api/notebooks/{nb}/shares", json={"user": "vera", "role": "viewer"})
    assert share.status_code == 201, share.json
    mine, veras, strangers, quiet = (_socket(mu_app, "alice"), _socket(mu_app, "vera"), _socket(mu_app, "mallory"),
                                     _socket(mu_app, "vera", watch=False))
    for sock in (mine, veras, strangers, quiet):
        sock.get_received()

    r = alice.post("/api/jobs", json={"notebook_id": nb, "cron": "0 2 * * *", "name": "n"})
    assert r.status_code == 201, r.json
    job = r.json["id"]
    assert _told(mine) == [(nb, job, "created")] and _told(veras) == [(nb, job, "created")]
    assert _told(strangers) == [] and _told(quiet) == []

    assert alice.post(f"/api/jobs/{job}/run", json={}).status_code == 202
    assert alice.patch(f"/api/jobs/{job}", json={"enabled": False}).status_code == 200
    assert _told(veras) == [(nb, job, "run"), (nb, job, "edited")]
    assert _told(strangers) == []

    # The scheduler's changes (a run started, a cell of it queued, it ended) go the same way.
    run = mu_app.extensions["store"].job_runs(job)[0]
    mu_app.extensions[JOBS_KEY].on_change(run)
    assert _told(veras) == [(nb, job, "run")] and _told(strangers) == []

    # vera's share goes: her watching socket hears nothing more of this notebook's jobs.
    share_id = share.json["id"]
    assert alice.delete(f"/api/notebooks/{nb}/shares/{share_id}").status_code == 204
    assert alice.delete(f"/api/jobs/{job}").status_code == 200
    assert _told(mine) == [(nb, job, "run"), (nb, job, "edited"), (nb, job, "run"), (nb, job, "deleted")]
    assert _told(veras) == [] and _told(strangers) == [] and _told(quiet) == []


def test_watch_jobs_takes_no_fields_and_needs_a_login(mu_app: Flask) -> None:
    sock = _socket(mu_app, "vera", watch=False)
    ack = sock.emit("command", {"type": "watch_jobs", "notebook_id": "x"}, callback=True)
    assert ack["ok"] is False and ack["status"] == 400 and "unknown fields" in ack["error"], ack
