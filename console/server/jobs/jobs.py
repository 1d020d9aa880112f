"""The jobs API: schedule a notebook, list and change jobs, run one now, read its history.

Roles come from the policy table (console/server/access.py): a job's URL carries <job_id> and its
row names a role on the job's notebook (`job:<role>`). Scheduling needs the editor role on the
notebook (the body names it, so the handler checks it); changing or deleting a job is for its
owner, the notebook's owner and admins; running one now needs the runner role, and it runs as
the job's owner. Bodies are typed dataclasses decoded by body_as (console/server/validate.py): every
field typed, unknown ones refused; what no annotation can say is checked after, in `_decoded`.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from flask import Blueprint, Flask, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from console.clock import app_clock
from console.outputs.view import view_run
from console.server import access, auth, serialize
from console.server.jobs import schedule, webhook
from console.server.deps import SESSIONS_KEY, get_config, get_store
from console.server.errors import ApiError
from console.server.jobs.jobrun import (SCHEDULE_ROLE, JobRunner, cell_label, check_params, declared_params,
                                        owner_problem)
from console.server.jobs.scheduler import JOBS_KEY, JobScheduler, schedule_of
from console.server.live.jobwatch import safely_tell
from console.server.validate import Check, body_as, query_int, typed_body
from console.store import NotFound
from console.store.jobs import JobRecord, JobRunRecord, Overlap
from console.wire.browser import JobChange
from console.wire.codec import Range

log = logging.getLogger(__name__)

MAX_RETRIES = 10
MAX_RETRY_DELAY = 24 * 3600
MAX_TIMEOUT = 7 * 24 * 3600


def _setting(default: Any = None, *, patch: bool = False, required: bool = False) -> Any:
    """A job body field: None = not given (left out or null). `default` is what a new job gets when it
    is not given (and what the dialog starts from), `patch` that a PATCH stores it as given (the rest
    are checked against each other first: schedule, params, enabled), `required` that a new job must
    give it (docs/api.md writes it so; a PATCH may leave it out)."""
    return dataclasses.field(default=None, metadata={"default": default, "patch": patch, "required": required})


def _no_nul(what: str) -> Check:
    # PostgreSQL text cannot hold a NUL, nor can an MLSQL string; no name or value needs one.
    return Check(lambda text: "\x00" not in text, f"holds a NUL character (\\x00), which no {what} may")


Text = Annotated[str, _no_nul("job field")]
# A run's parameter values: text, as `set` values are; checked against the notebook's declared ones by
# checked_params (the run now body, a job's params, POST /api/notebooks/<id>/run).
Params = Annotated[dict[str, Annotated[str, _no_nul("parameter")]],
                   Check(lambda values: not any("\x00" in k for k in values),
                         "has a name holding a NUL character (\\x00), which no parameter may")]


@typed_body("POST /api/jobs")
@dataclass
class JobBody:
    """A decoded create or PATCH body: the one declaration of a job's settings (decoder, defaults,
    what PATCH changes, docs/api.md's field list, the dialog's defaults)."""

    notebook_id: str | None = _setting(required=True)
    name: Annotated[Text, Check(lambda n: 1 <= len(n.strip()) <= 255, "must be 1 to 255 characters")] | None = \
        _setting(patch=True)
    cron: Text | None = _setting()
    every_minutes: int | None = _setting()  # its range is the schedule's rule (schedule.parse)
    timezone: Text | None = _setting("UTC")
    params: Params | None = _setting({})
    retries: Annotated[int, Range(0, MAX_RETRIES)] | None = _setting(0, patch=True)
    retry_delay_seconds: Annotated[int, Range(0, MAX_RETRY_DELAY)] | None = _setting(0, patch=True)
    timeout_seconds: Annotated[int, Range(1, MAX_TIMEOUT)] | None = _setting(3600, patch=True)
    overlap: Overlap | None = _setting("skip", patch=True)
    webhook_url: str | None = _setting("", patch=True)
    notify_success: bool | None = _setting(False, patch=True)
    enabled: bool | None = _setting(True)

    @property
    def touches_schedule(self) -> bool:
        return self.cron is not None or self.every_minutes is not None or self.timezone is not None

    def given(self, name: str) -> Any:
        """The field as sent, else a new job's default."""
        value = getattr(self, name)
        return _DEFAULTS[name] if value is None else value


@typed_body("POST /api/jobs/<job_id>/run")
@dataclass
class RunNow:
    params: Params | None = None  # over the job's own, for this run only


_SETTINGS = dataclasses.fields(JobBody)
JOB_BODY_FIELDS = tuple(f.name for f in _SETTINGS)
_DEFAULTS: dict[str, Any] = {f.name: f.metadata["default"] for f in _SETTINGS}
_PATCHED = tuple(f.name for f in _SETTINGS if f.metadata["patch"])


def job_defaults() -> dict[str, Any]:
    """What a new job gets for each field left out (None: no default, the field says what it is)."""
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in _DEFAULTS.items()}


def _decoded() -> JobBody:
    """The request's job body (body_as checks each field by its annotation), and what no annotation
    says: its webhook a URL, and one on this server's network only where that is allowed (webhook.py).
    The schedule's rules (cron or every_minutes, a known time zone) are schedule.parse's."""
    spec = body_as(JobBody)
    if spec.webhook_url:
        why = webhook.malformed(spec.webhook_url) or (
            None if get_config().WEBHOOK_PRIVATE else webhook.private_literal(spec.webhook_url))
        if why:
            raise ApiError(400, why)
    return spec


def _schedule(cron: str | None, every: int | None, tz: str | None) -> schedule.Schedule:
    try:
        return schedule.parse(cron, every, tz)
    except schedule.BadSchedule as exc:
        raise ApiError(400, str(exc)) from None


def checked_params(notebook_id: str, values: dict[str, str]) -> dict[str, str]:
    """The values as text; 400 naming the declared parameters when one is not among them."""
    try:
        return check_params(get_store(), notebook_id, values)
    except ValueError as exc:
        declared = [p.name for p in declared_params(get_store(), notebook_id)]
        raise ApiError(400, str(exc), declared=declared) from None


def _scheduler() -> JobScheduler:
    scheduler: JobScheduler = current_app.extensions[JOBS_KEY]
    return scheduler


def _preview(sched: schedule.Schedule, anchor: datetime | None = None) -> dict[str, Any]:
    times = schedule.next_times(sched, _scheduler().clock.now(), 3, anchor)
    return {"description": sched.describe(), "next": [t.isoformat() for t in times],
            "readable": [schedule.readable(t) for t in times]}


def _job_json(job: JobRecord, last: JobRunRecord | None = None) -> dict[str, Any]:
    d: dict[str, Any] = serialize.plain(job)
    d["schedule"] = _preview(schedule_of(job), job.created_at) if job.enabled else {
        "description": schedule_of(job).describe(), "next": [], "readable": []}
    d["last_run"] = serialize.plain(last) if last else None
    return d


def _may_change(job: JobRecord) -> None:
    """Changing what a job runs as someone is for that someone, the notebook's owner and admins."""
    user = auth.signed_in()
    nb = get_store().get_notebook_info(job.notebook_id)
    if job.owner_id != user.id and access.role_of(get_store(), user, nb) != "owner":
        raise ApiError(403, "only the job's owner or the notebook's owner may change or delete this job")


# ---------------------------------------------------------------------- handlers
def preview() -> ResponseReturnValue:
    every = request.args.get("every_minutes")
    try:
        minutes = int(every) if every else None
    except ValueError:
        raise ApiError(400, "'every_minutes' must be an integer") from None
    return jsonify(_preview(_schedule(request.args.get("cron"), minutes, request.args.get("timezone"))))


def create() -> ResponseReturnValue:
    spec = _decoded()
    if not spec.notebook_id:
        raise ApiError(400, "'notebook_id' is required: the notebook to schedule")
    user, nb = access.require(spec.notebook_id, SCHEDULE_ROLE)
    sched = _schedule(spec.cron, spec.every_minutes, spec.timezone)
    params = checked_params(nb.id, spec.params or {})
    now = _scheduler().clock.now()
    enabled = spec.given("enabled")
    job = get_store().create_job(
        nb.id, user.id, (spec.name or f"{nb.name} job").strip(), schedule_kind=sched.kind, cron=sched.cron,
        every_minutes=sched.every_minutes, timezone=sched.timezone, params=params, enabled=enabled,
        **{name: spec.given(name) for name in _PATCHED if name != "name"},
        next_run_at=schedule.first_after(sched, now, anchor=now), now=now)
    _scheduler().wake()
    _tell(job, "created")
    return jsonify(_job_json(job)), 201


def list_jobs() -> ResponseReturnValue:
    store, user = get_store(), auth.signed_in()
    infos: dict[str, Any] = {}
    visible = []
    for job in store.list_jobs():
        if job.notebook_id not in infos:
            try:
                infos[job.notebook_id] = store.get_notebook_info(job.notebook_id)
            except NotFound:
                continue
        if access.role_of(store, user, infos[job.notebook_id]) is not None:
            visible.append(job)
    last = store.last_job_runs([j.id for j in visible])
    out = []
    for job in visible:
        d = _job_json(job, last.get(job.id))
        d["notebook_name"] = infos[job.notebook_id].name
        out.append(d)
    return jsonify({"jobs": out})


def notebook_jobs(notebook_id: str) -> ResponseReturnValue:
    """The notebook's jobs, and which of its cell runs a job made (the page's "run by job …")."""
    store = get_store()
    jobs = store.list_jobs(notebook_id)
    last = store.last_job_runs([j.id for j in jobs])
    made_by = {run: {"job": name, "job_id": job_id, "job_run": jr}
               for run, (job_id, name, jr) in store.job_run_of_cell_runs(notebook_id).items()}
    return jsonify({"jobs": [_job_json(j, last.get(j.id)) for j in jobs], "cell_runs": made_by})


def notebook_params_list(notebook_id: str) -> ResponseReturnValue:
    # job_defaults: what the Schedule dialog starts from (one declaration: JobBody).
    return jsonify({"params": [{"name": p.name, "default": p.default, "cell": p.cell}
                               for p in declared_params(get_store(), notebook_id)],
                    "job_defaults": job_defaults()})


def get_job(job_id: str) -> ResponseReturnValue:
    store = get_store()
    job = store.get_job(job_id)
    return jsonify(_job_json(job, store.last_job_runs([job.id]).get(job.id)))


def update(job_id: str) -> ResponseReturnValue:
    store = get_store()
    job = store.get_job(job_id)
    _may_change(job)
    spec = _decoded()
    if spec.notebook_id is not None and spec.notebook_id != job.notebook_id:
        raise ApiError(400, "a job's notebook cannot change; make a new job")
    changes: dict[str, Any] = {k: getattr(spec, k) for k in _PATCHED if getattr(spec, k) is not None}
    if spec.params is not None:
        changes["params"] = checked_params(job.notebook_id, spec.params)
    sched = schedule_of(job)
    if spec.touches_schedule:
        cron = spec.cron if spec.cron is not None else (None if spec.every_minutes is not None else job.cron or None)
        every = spec.every_minutes if spec.every_minutes is not None else (
            None if spec.cron is not None else job.every_minutes)
        sched = _schedule(cron, every, spec.timezone or job.timezone)
        changes.update(schedule_kind=sched.kind, cron=sched.cron, every_minutes=sched.every_minutes,
                       timezone=sched.timezone)
    enabled = job.enabled if spec.enabled is None else spec.enabled
    if enabled and not job.enabled:
        problem = owner_problem(store, job)
        if problem is not None:
            raise ApiError(409, f"this job cannot be enabled: {problem}")
        changes["disabled_reason"] = ""
    if spec.enabled is not None:
        changes["enabled"] = enabled
    if enabled and (spec.touches_schedule or not job.enabled):
        now = _scheduler().clock.now()
        changes["next_run_at"] = schedule.first_after(sched, now, anchor=job.created_at)
    job = store.update_job(job_id, **changes)
    _scheduler().wake()
    _tell(job, "edited")
    return jsonify(_job_json(job))


def delete(job_id: str) -> ResponseReturnValue:
    store = get_store()
    job = store.get_job(job_id)
    _may_change(job)
    store.delete_job(job_id)
    _tell(job, "deleted")
    return jsonify({}), 200


def run_now(job_id: str) -> ResponseReturnValue:
    store = get_store()
    job = store.get_job(job_id)
    overrides = body_as(RunNow, required=False).params or {}
    params = checked_params(job.notebook_id, {**job.params, **overrides})
    problem = owner_problem(store, job)
    if problem is not None:
        raise ApiError(409, f"this job cannot run: {problem}")
    run = store.queue_job_run(job.id, "manual", params, triggered_by=auth.signed_in().id)
    _scheduler().wake()
    _tell(job, "run")
    return jsonify(serialize.plain(run)), 202


def job_runs(job_id: str) -> ResponseReturnValue:
    """The job's runs, newest first, each with its cell runs' stored output."""
    store, cfg = get_store(), get_config()
    job = store.get_job(job_id)
    # Each cell run is named as the notebook shows the cell now: its number and first line.
    cells = {c.id: (i + 1, c.source) for i, c in enumerate(store.get_notebook(job.notebook_id).cells)}
    out = []
    for run in store.job_runs(job_id, limit=min(max(query_int("limit", 20), 1), 200)):
        d: dict[str, Any] = serialize.plain(run)
        views = []
        for rid in run.run_ids:
            try:
                view = view_run(store, store.get_run(rid), inline_bytes=cfg.OUTPUT_INLINE_BYTES,
                                result_rows=cfg.RESULT_ROWS)
            except NotFound:  # cleared outputs take their runs with them
                continue
            position, source = cells.get(view.run.cell_id, (None, view.run.source))
            views.append({**serialize.run_view(view), "cell_position": position,
                          "cell_title": cell_label(position, source)})
        d["outputs"] = views
        out.append(d)
    return jsonify({"runs": out})


def jobs_page() -> ResponseReturnValue:
    from console.server.pages import index

    return index()


def create_blueprint() -> Blueprint:
    bp = Blueprint("jobs", __name__)
    bp.add_url_rule("/jobs", "page", jobs_page, methods=["GET"])
    bp.add_url_rule("/api/jobs/preview", "preview", preview, methods=["GET"])
    bp.add_url_rule("/api/jobs", "create", create, methods=["POST"])
    bp.add_url_rule("/api/jobs", "list", list_jobs, methods=["GET"])
    bp.add_url_rule("/api/notebooks/<notebook_id>/jobs", "notebook_jobs", notebook_jobs, methods=["GET"])
    bp.add_url_rule("/api/notebooks/<notebook_id>/params", "params", notebook_params_list, methods=["GET"])
    bp.add_url_rule("/api/jobs/<job_id>", "get", get_job, methods=["GET"])
    bp.add_url_rule("/api/jobs/<job_id>", "update", update, methods=["PATCH"])
    bp.add_url_rule("/api/jobs/<job_id>", "delete", delete, methods=["DELETE"])
    bp.add_url_rule("/api/jobs/<job_id>/run", "run", run_now, methods=["POST"])
    bp.add_url_rule("/api/jobs/<job_id>/runs", "runs", job_runs, methods=["GET"])
    return bp


def init_jobs(app: Flask) -> JobScheduler:
    """The jobs blueprint and this app's scheduler (started by the serving process, not here).

    The clock is the app's (console/clock.py app_clock): the system's, or a test's config CLOCK.
    """
    cfg = app.extensions["config"]
    store = app.extensions["store"]
    holder = app.extensions[SESSIONS_KEY]
    clock = app_clock(app)
    app.register_blueprint(create_blueprint())
    runner = JobRunner(store, holder.get, base_url=f"http://{cfg.HOST}:{cfg.PORT}",
                       webhook_private=cfg.WEBHOOK_PRIVATE, clock=clock)
    scheduler = JobScheduler(store, runner, lease_seconds=float(app.config.get("JOBS_LEASE_SECONDS", 30.0)),
                             clock=clock)
    scheduler.on_change = lambda run: _tell_run(app, run)
    app.extensions[JOBS_KEY] = scheduler
    return scheduler


def _tell(job: JobRecord, change: JobChange) -> None:
    """The Jobs pages that may see the job's notebook read their list again (live/jobwatch.py); the
    change is made whether or not they could be told."""
    safely_tell(current_app._get_current_object(), job.notebook_id, job.id, change)  # type: ignore[attr-defined]


def _tell_run(app: Flask, run: JobRunRecord) -> None:
    """The scheduler's: a run of a job changed (claimed, started, a cell queued, ended, reaped).
    Never raises: telling the pages is no part of the scheduler's pass or of the run."""
    try:
        job = app.extensions["store"].get_job(run.job_id)
    except NotFound:  # deleted meanwhile: its pages were told then
        return
    except Exception:
        log.exception("reading job %s to tell the Jobs pages failed", run.job_id)
        return
    safely_tell(app, job.notebook_id, job.id, "run")

