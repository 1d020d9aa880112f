"""`mlsql-console jobs list|run|enable|disable`: jobs from the command line, through the store.

The CLI never runs a notebook itself: `jobs run` queues a run (trigger `manual`) that the serving
process's scheduler starts at once (console/server/scheduler.py), as the job's owner.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import click


def _store(data_dir: str | None) -> Any:
    from console.cli import _config, _open_store

    return _open_store(_config(data_dir))


def _job(store: Any, job_id: str) -> Any:
    from console.store import NotFound

    try:
        return store.get_job(job_id)
    except NotFound as exc:
        raise click.ClickException(str(exc)) from None


def _values(params: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in params:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--param")
        out[name.strip()] = value
    return out


data_dir_option = click.option("--data-dir", type=click.Path(file_okay=False), default=None,
                               help="Data folder (default: $CONSOLE_DATA_DIR or ./console-data).")


@click.group()
def jobs() -> None:
    """Notebooks that run on a schedule (docs/jobs.md)."""


@jobs.command("list")
@data_dir_option
def jobs_list(data_dir: str | None) -> None:
    """Every job: id, name, notebook, schedule, next firing, last status."""
    from console.server.scheduler import schedule_of

    store = _store(data_dir)
    all_jobs = store.list_jobs()
    last = store.last_job_runs([j.id for j in all_jobs])
    for j in all_jobs:
        nxt = j.next_run_at.isoformat(timespec="minutes") if j.next_run_at else f"disabled {j.disabled_reason}".rstrip()
        status = last[j.id].status if j.id in last else "never ran"
        click.echo(f"{j.id}  {j.name}  notebook {j.notebook_id}  {schedule_of(j).describe()}  "
                   f"next {nxt}  last {status}")


@jobs.command("run")
@click.argument("job_id")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE", help="A parameter's value; repeatable.")
@data_dir_option
def jobs_run(job_id: str, params: tuple[str, ...], data_dir: str | None) -> None:
    """Queue a run of JOB_ID now; the server starts it as the job's owner."""
    from console.lang import params as notebook_params
    from console.server.jobrun import owner_problem

    store = _store(data_dir)
    job = _job(store, job_id)
    nb = store.get_notebook(job.notebook_id)
    try:
        values = notebook_params.check(notebook_params.declared([(c.kind, c.source) for c in nb.cells]),
                                       {**job.params, **_values(params)})
    except notebook_params.UnknownParams as exc:
        raise click.ClickException(str(exc)) from None
    problem = owner_problem(store, job)
    if problem is not None:
        raise click.ClickException(f"this job cannot run: {problem}")
    run = store.queue_job_run(job.id, "manual", values)
    click.echo(f"queued run {run.id} of job {job.id}; a running server starts it")


@jobs.command("enable")
@click.argument("job_id")
@data_dir_option
def jobs_enable(job_id: str, data_dir: str | None) -> None:
    """Fire JOB_ID on its schedule again (from the next occurrence on)."""
    from console.server import schedule
    from console.server.jobrun import owner_problem
    from console.server.scheduler import schedule_of

    store = _store(data_dir)
    job = _job(store, job_id)
    problem = owner_problem(store, job)
    if problem is not None:
        raise click.ClickException(f"this job cannot be enabled: {problem}")
    nxt = schedule.first_after(schedule_of(job), datetime.now(timezone.utc), anchor=job.created_at)
    store.update_job(job.id, enabled=True, disabled_reason="", next_run_at=nxt)
    click.echo(f"enabled {job.id}; next {nxt.isoformat(timespec='minutes') if nxt else 'never'}")


@jobs.command("disable")
@click.argument("job_id")
@data_dir_option
def jobs_disable(job_id: str, data_dir: str | None) -> None:
    """Stop firing JOB_ID (a run in progress finishes)."""
    store = _store(data_dir)
    job = _job(store, job_id)
    store.update_job(job.id, enabled=False, disabled_reason="disabled from the command line")
    click.echo(f"disabled {job.id}")
