"""`jobs_changed` for the Jobs page: who is told that a job or one of its runs changed.

A socket asks with the `watch_jobs` command (console/server/live/sockets.py; its policy row is
`reader login`). It is not a room: at each change the event goes to each watching socket whose
user may view the job's notebook *now* (the registry's viewer check, console/server/live/membership.py),
as GET /api/jobs lists exactly the jobs of the notebooks its caller may see. So a share taken
away stops the events at once, and a job made on any notebook the user sees is told too. The
event names the notebook, the job and what kind of change it was, nothing else: the page reads
GET /api/jobs (and a job's runs) again, with its own access.

Told by the jobs API (create, edit, delete, Run now) and by the scheduler (a run claimed, started,
a cell of it queued, a run ended, a lapsed run reaped), from request threads and the scheduler's.
"""
from __future__ import annotations

import logging
from typing import Any

from flask import Flask

from console.wire.browser import JobChange, JobsChangedEvent

from console.server.live.membership import NAMESPACE, REGISTRY_KEY, Registry

log = logging.getLogger(__name__)


def tell_jobs_changed(app: Flask, notebook_id: str, job_id: str, change: JobChange) -> int:
    """Send jobs_changed to the watching sockets whose user may view `notebook_id`; returns how many."""
    reg: Registry | None = app.extensions.get(REGISTRY_KEY)
    socketio: Any = app.extensions.get("socketio")
    if reg is None or socketio is None:
        return 0
    watchers = reg.job_watchers()
    if not watchers:
        return 0
    event = JobsChangedEvent(notebook_id, job_id, change).to_wire()  # type: ignore[arg-type]
    allowed: dict[int, bool] = {}
    sent = 0
    with app.app_context():  # the viewer check reads the store (the scheduler's thread has no context)
        for sid, user_id in watchers:
            if user_id not in allowed:
                allowed[user_id] = reg.may_view(user_id, notebook_id)
            if allowed[user_id]:
                socketio.emit("event", event, to=sid, namespace=NAMESPACE)
                sent += 1
    return sent


def safely_tell(app: Flask, notebook_id: str, job_id: str, change: JobChange) -> None:
    """tell_jobs_changed where a failure to tell must not fail what changed (a request, a run): logged."""
    try:
        tell_jobs_changed(app, notebook_id, job_id, change)
    except Exception:
        log.exception("telling the Jobs pages about job %s failed", job_id)
