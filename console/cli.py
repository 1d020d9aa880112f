"""The `mlsql-console` command: serve, init, run, datasets, demo.

Heavy modules (the web app, gunicorn, the engine, Ray, TensorFlow) are imported inside the
commands that need them, so `mlsql-console --help` stays fast.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from console.config import Config, ensure_secret_key, load_config


def _config(data_dir: str | None, **overrides: Any) -> Config:
    try:
        return load_config({"DATA_DIR": data_dir, **overrides})
    except ValueError as exc:  # a bad CONSOLE_* value
        raise click.UsageError(str(exc)) from exc


def _open_store(cfg: Config) -> Any:
    from console.store import Store

    cfg.data_dir.mkdir(parents=True, exist_ok=True)
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
@click.option("--threads", type=int, default=64, show_default=True, help="Request threads of the gunicorn worker.")
def serve(host: str | None, port: int | None, data_dir: str | None, dev: bool, threads: int) -> None:
    """Serve the notebook web app."""
    from console.web import create_app

    cfg = _config(data_dir, HOST=host, PORT=port)
    app = create_app(dict(cfg))
    click.echo(f"MLSQL Console on http://{cfg.HOST}:{cfg.PORT} (data in {cfg.data_dir})")
    if dev:
        socketio = app.extensions["socketio"]
        socketio.run(app, host=cfg.HOST, port=cfg.PORT, allow_unsafe_werkzeug=True, use_reloader=False)
        return
    from console.web.server import GunicornServer

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
def run(file: str, data_dir: str | None, cell: int | None) -> None:
    """Run a notebook file (.json) or an MLSQL script (.mlsql) without the browser."""
    try:
        from console.engine.headless import run_file
    except ImportError as exc:
        raise click.ClickException(f"the headless runner is not available: {exc}") from exc
    cfg = _config(data_dir)
    sys.exit(run_file(Path(file), cfg, cell=cell))


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
    from console.runtime.datasets import write_mnist

    kwargs = {k: v for k, v in {"rows": rows, "partitions": partitions}.items() if v is not None}
    summary = write_mnist(path, synthetic=synthetic, **kwargs)
    click.echo(summary)


@main.command()
@data_dir_option
def demo(data_dir: str | None) -> None:
    """Write the tutorial's MNIST notebook into the store, and its data to /tmp/mnist when missing."""
    from console.demo import DEMO_DATA, install_demo

    cfg = _config(data_dir)
    store = _open_store(cfg)
    admin = store.ensure_user("admin", display_name="Local admin", is_admin=True)
    notebook_id, created = install_demo(store, admin.id)
    store.close()
    click.echo(f"demo notebook {notebook_id} {'written' if created else 'already there'}")
    if DEMO_DATA.exists():
        click.echo(f"demo data: {DEMO_DATA} exists")
        return
    try:
        from console.runtime.datasets import write_mnist
    except ImportError:
        click.echo(f"demo data: {DEMO_DATA} is missing and no dataset writer is installed", err=True)
        return
    click.echo(write_mnist(str(DEMO_DATA), synthetic=True))
