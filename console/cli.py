"""The `mlsql-console` command: serve, init, run, datasets, demo, users, jobs.

Heavy modules (the web app, gunicorn, the engine, Ray, TensorFlow) are imported inside the
commands that need them, so `mlsql-console --help` stays fast.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from console.config import Config, ensure_secret_key, load_config, prepare_data_dir


def _config(data_dir: str | None, **overrides: Any) -> Config:
    try:
        return load_config({"DATA_DIR": data_dir, **overrides})
    except ValueError as exc:  # a bad CONSOLE_* value
        raise click.UsageError(str(exc)) from exc


def _open_store(cfg: Config) -> Any:
    from console.store import Store

    for moved in prepare_data_dir(cfg):  # the old layout's database and key, out of user code's sight
        click.echo(f"moved into the server's private folder: {moved}", err=True)
    return Store(cfg.database_url)


data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False), default=None,
    help="Data folder (default: $CONSOLE_DATA_DIR or ./console-data).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """MLSQL Console for Python: a browser notebook for MLSQL and Python cells on Ray."""


@main.command()
@click.option("--host", default=None, help="Address to listen on (default: $CONSOLE_HOST or 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default: $CONSOLE_PORT or 5000).")
@data_dir_option
@click.option("--dev", is_flag=True, help="Werkzeug's development server with reloader off (not for production).")
# Each open websocket holds a thread; 1024 is console/server/server.py's DEFAULT_THREADS (not imported
# here: that would load gunicorn for every command).
@click.option("--threads", type=int, default=1024, show_default=True,
              help="Threads of the gunicorn worker; each open websocket holds one, and 1/8 stay for HTTP.")
def serve(host: str | None, port: int | None, data_dir: str | None, dev: bool, threads: int) -> None:
    """Serve the notebook web app."""
    from console.server import SANDBOX_KEY, SANDBOX_OFF_WARNING, SandboxUnavailable, create_app

    cfg = _config(data_dir, HOST=host, PORT=port)
    try:
        app = create_app(dict(cfg))
    except SandboxUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"MLSQL Console on http://{cfg.HOST}:{cfg.PORT} (data in {cfg.data_dir})")
    sandbox_line = app.extensions[SANDBOX_KEY]
    if sandbox_line == SANDBOX_OFF_WARNING:  # loudly: on the terminal too, not only in the log
        click.echo(click.style("WARNING: " + sandbox_line, fg="red", bold=True), err=True)
    else:
        click.echo(sandbox_line)
    if app.extensions.get("console.single_user"):
        click.echo("single-user mode: no login, every visitor through 127.0.0.1 is the local admin; what they make "
                   "belongs to the account 'admin' (to log in as it later: mlsql-console users passwd admin)")
    else:
        click.echo(f"login mode: log in at http://{cfg.HOST}:{cfg.PORT}/login "
                   "(add users: mlsql-console users add NAME)")
    demo_id = _demo_notebook_id(app.extensions["store"])
    if demo_id is not None:
        click.echo(f"demo notebook: http://{cfg.HOST}:{cfg.PORT}/notebooks/{demo_id}")
    if dev:
        app.extensions["console.jobs"].start()  # gunicorn's worker starts it after its fork
        socketio = app.extensions["socketio"]
        socketio.run(app, host=cfg.HOST, port=cfg.PORT, allow_unsafe_werkzeug=True, use_reloader=False)
        return
    from console.server.server import GunicornServer

    GunicornServer(app, host=cfg.HOST, port=cfg.PORT, threads=threads).run()


@main.command()
@data_dir_option
def init(data_dir: str | None) -> None:
    """Create the data folder, the database (migrated) and the secret key."""
    cfg = _config(data_dir)
    store = _open_store(cfg)
    ensure_secret_key(cfg)
    store.ensure_user("admin", display_name="Local admin", is_admin=True)
    store.close()
    click.echo(f"initialised {cfg.data_dir} (database: {store!r})")


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@data_dir_option
@click.option("--cell", type=int, default=None, help="Run only cell N (1-based).")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A value for a parameter (set NAME = … where type=\"defaultParam\"); repeatable.")
@click.option("--manifest", type=click.Path(dir_okay=False), default=None,
              help="Write what each cell read and wrote (delta versions, file digests) to this JSON file.")
def run(file: str, data_dir: str | None, cell: int | None, params: tuple[str, ...], manifest: str | None) -> None:
    """Run a notebook file (.json) or an MLSQL script (.mlsql) without the browser."""
    try:
        from console.kernel.headless import run_file
    except ImportError as exc:
        raise click.ClickException(f"the headless runner is not available: {exc}") from exc
    cfg = _config(data_dir)
    sys.exit(run_file(Path(file), cfg, cell=cell, params=_param_values(params), manifest=manifest))


@main.command()
@click.argument("run_id")
@data_dir_option
@click.option("--force", is_flag=True, help="Run even when a file it read, or the environment, changed since.")
def replay(run_id: str, data_dir: str | None, force: bool) -> None:
    """Re-run a stored run as recorded, without the browser, and say whether its result is the same.

    The run's cell, as it was at the revision RUN_ID ran, runs in a new headless session with the
    run's parameters and the notebook's environment at that revision; each delta table of the lake
    it read is read at the recorded version, each file it read is compared with what was recorded
    (docs/lineage.md). Only that cell runs: the cells before it may write (a replay must not), so a
    cell that uses tables an earlier cell made fails here naming them, and is replayed in the
    notebook (Re-run as recorded), whose session holds them. Exit status 0: same result; 1: the
    cell failed or the result differs.
    """
    import json
    import tempfile

    from console.kernel.headless import NOTEBOOK_FORMAT, run_file
    from console.server.api.rerun import NotReplayable, recorded
    from console.server.api.run_diff import result_facts
    from console.store import NotFound
    from console.wire.cell import Result

    cfg = _config(data_dir)
    store = _open_store(cfg)
    try:
        r = recorded(store, run_id, force)
    except NotFound:
        raise click.ClickException(f"no run {run_id!r} in {cfg.data_dir}") from None
    except NotReplayable as exc:
        raise click.ClickException(str(exc)) from None
    cell = r.cells[r.index]
    doc = {"format": NOTEBOOK_FORMAT, "cells": [{"kind": cell.get("kind", "mlsql"), "source": cell.get("source", "")}],
           "metadata": {"environment": store.get_environment(r.run.notebook_id, r.manifest.revision)}}
    results: dict[int, Result] = {}
    click.echo(f"-- replaying run {r.run.id}: cell {r.index + 1} of revision {r.manifest.revision}, "
               f"pinned {json.dumps(r.inputs.pins)}")
    with tempfile.TemporaryDirectory(prefix="mlsql-replay-") as tmp:
        path = Path(tmp) / "replay.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        code = run_file(path, cfg, params=r.manifest.params, replay=r.inputs, results=results)
    if code:
        sys.exit(code)
    got = results.get(1)
    now = result_facts({"columns": got.columns, "rows": got.rows, "total_rows": got.total_rows} if got else None)
    was = result_facts(r.run.result)
    differs = [k for k in ("total_rows", "columns", "digest") if (now or {}).get(k) != (was or {}).get(k)]
    click.echo("-- same result as the recorded run" if not differs else
               f"-- the result differs from the recorded run's: {', '.join(differs)}")
    sys.exit(1 if differs else 0)


@main.group()
def datasets() -> None:
    """Write example data sets."""


@datasets.command("mnist")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--synthetic", is_flag=True, help="Generate MNIST-shaped synthetic data instead of downloading.")
@click.option("--rows", type=int, default=None, help="Rows to write (default: the full set).")
@click.option("--partitions", type=int, default=None, help="Parquet files to split the rows into.")
def mnist(path: str, synthetic: bool, rows: int | None, partitions: int | None) -> None:
    """Write MNIST (image: 784 floats, label: int) as Parquet at PATH."""
    from console.demo.datasets import write_mnist

    kwargs = {k: v for k, v in {"rows": rows, "partitions": partitions}.items() if v is not None}
    summary = write_mnist(path, synthetic=synthetic, **kwargs)
    click.echo(summary)


@main.command()
@data_dir_option
def demo(data_dir: str | None) -> None:
    """Write the tutorial's MNIST notebook into the store, and its data to /tmp/mnist when missing.

    Also creates the user `demo` (who owns a share of the notebook) with a password printed once.
    """
    from console.demo import DEMO_DATA, install_demo

    cfg = _config(data_dir)
    store = _open_store(cfg)
    admin = store.ensure_user("admin", display_name="Local admin", is_admin=True)
    notebook_id, created = install_demo(store, admin.id)
    login = _demo_login(store, notebook_id)
    store.close()
    click.echo(f"demo notebook {notebook_id} {'written' if created else 'already there'}")
    click.echo(login)
    if DEMO_DATA.exists():
        click.echo(f"demo data: {DEMO_DATA} exists")
        return
    try:
        from console.demo.datasets import write_mnist
    except ImportError:
        click.echo(f"demo data: {DEMO_DATA} is missing and no dataset writer is installed", err=True)
        return
    click.echo(write_mnist(str(DEMO_DATA), synthetic=True))


def _demo_notebook_id(store: Any) -> str | None:
    """The demo notebook's id when `mlsql-console demo` wrote it (make run does), else None."""
    from console.demo import seed_notebook

    found = store.find_notebooks(name=seed_notebook()["name"])
    return str(found[0].id) if found else None


def _demo_login(store: Any, notebook_id: str) -> str:
    """Make sure user `demo` exists and may edit the demo notebook; say how to log in."""
    import secrets

    from console.server.auth import hash_password

    user = store.ensure_user("demo", display_name="Demo user")
    store.set_share(user.id, "editor", notebook_id=notebook_id)
    # `demo` does not know how the server will run (make run: single-user unless CONSOLE_SINGLE_USER=false):
    # the server says its mode when it starts; this says what the demo user needs in login mode.
    if user.has_password:
        return "in login mode, log in as demo with the password printed when it was made " \
               "(reset it: mlsql-console users passwd demo)"
    password = secrets.token_urlsafe(12)
    store.set_password(user.id, hash_password(password))
    return f"in login mode, log in as user: demo  password: {password}  (shown once; " \
           "change it: mlsql-console users passwd demo)"


@main.group()
def users() -> None:
    """Add and list local users; change their passwords and site roles."""


def _read_password(password: str | None) -> str:
    from console.server.auth import check_new_password

    if password is None:
        password = click.prompt("password", hide_input=True, confirmation_prompt=True)
    try:
        return check_new_password(password)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


def _site_role_choice() -> click.Choice:
    from console.roles import SITE_ROLES

    return click.Choice(SITE_ROLES)


@users.command("add")
@click.argument("username")
@click.option("--role", "site_role", type=_site_role_choice(), default=None,
              help="reader: views what is shared with it; member (default): creates notebooks and runs code; "
                   "admin: owns every notebook.")
@click.option("--admin", "is_admin", is_flag=True, help="The same as --role admin.")
@click.option("--display-name", default="", help="The name others see (default: the user name).")
@click.option("--password", default=None, help="The password (default: prompt; avoid on shared machines).")
@data_dir_option
def users_add(username: str, site_role: str | None, is_admin: bool, display_name: str, password: str | None,
              data_dir: str | None) -> None:
    """Create a user who logs in with a password."""
    from console.roles import DEFAULT_SITE_ROLE
    from console.store import StoreError
    from console.server.auth import hash_password

    if is_admin and site_role not in (None, "admin"):
        raise click.UsageError(f"--admin and --role {site_role} disagree: give one of them")
    role = "admin" if is_admin else site_role or DEFAULT_SITE_ROLE
    secret = _read_password(password)
    store = _open_store(_config(data_dir))
    try:
        store.create_user(username, hash_password(secret), display_name=display_name, site_role=role)
    except StoreError as exc:
        raise click.ClickException(exc.message) from exc
    finally:
        store.close()
    click.echo(f"user {username} created ({role})")


@users.command("list")
@data_dir_option
def users_list(data_dir: str | None) -> None:
    """List users: name, site role, whether a password is set."""
    store = _open_store(_config(data_dir))
    for u in store.list_users():
        flags = ", ".join([u.site_role] + (["no password"] if not u.has_password else []))
        click.echo(f"{u.username}\t{u.display_name}\t({flags})")
    store.close()


@users.command("set-role")
@click.argument("username")
@click.argument("site_role", metavar="reader|member|admin", type=_site_role_choice())
@data_dir_option
def users_set_role(username: str, site_role: str, data_dir: str | None) -> None:
    """Change a user's site role; it holds from the user's next request on (no new login needed)."""
    from console.store import StoreError

    store = _open_store(_config(data_dir))
    try:
        before = store.get_user_by_name(username).site_role
        store.set_site_role(store.get_user_by_name(username).id, site_role)
    except StoreError as exc:
        raise click.ClickException(exc.message) from exc
    finally:
        store.close()
    click.echo(f"user {username}: {before} -> {site_role}")


@users.command("passwd")
@click.argument("username")
@click.option("--password", default=None, help="The new password (default: prompt).")
@data_dir_option
def users_passwd(username: str, password: str | None, data_dir: str | None) -> None:
    """Set a user's password; their open logins end."""
    from console.store import NotFound
    from console.server.auth import hash_password

    secret = _read_password(password)
    store = _open_store(_config(data_dir))
    try:
        user = store.get_user_by_name(username)
        store.set_password(user.id, hash_password(secret))
        ended = store.revoke_user_sessions(user.id)
    except NotFound as exc:
        raise click.ClickException(exc.message) from exc
    finally:
        store.close()
    click.echo(f"password of {username} changed; {ended} login(s) ended")


# ---------------------------------------------------------------- jobs (docs/jobs.md)
# The CLI never runs a notebook itself: `jobs run` queues a run (trigger `manual`) that the
# serving process's scheduler starts at once (console/server/jobs/scheduler.py), as the job's owner.
def _job(store: Any, job_id: str) -> Any:
    from console.store import NotFound

    try:
        return store.get_job(job_id)
    except NotFound as exc:
        raise click.ClickException(str(exc)) from None


def _param_values(params: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in params:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--param")
        out[name.strip()] = value
    return out


@main.group()
def jobs() -> None:
    """Notebooks that run on a schedule (docs/jobs.md)."""


@jobs.command("list")
@data_dir_option
def jobs_list(data_dir: str | None) -> None:
    """Every job: id, name, notebook, schedule, next firing, last status."""
    from console.server.jobs.scheduler import schedule_of

    store = _open_store(_config(data_dir))
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
    from console.server.jobs.jobrun import check_params, owner_problem

    store = _open_store(_config(data_dir))
    job = _job(store, job_id)
    try:
        values = check_params(store, job.notebook_id, {**job.params, **_param_values(params)})
    except ValueError as exc:  # an undeclared parameter: the message lists the declared ones
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
    from datetime import datetime, timezone

    from console.server.jobs import schedule
    from console.server.jobs.jobrun import owner_problem
    from console.server.jobs.scheduler import schedule_of

    store = _open_store(_config(data_dir))
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
    store = _open_store(_config(data_dir))
    job = _job(store, job_id)
    store.update_job(job.id, enabled=False, disabled_reason="disabled from the command line")
    click.echo(f"disabled {job.id}")
