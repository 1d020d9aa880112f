"""Shared fixtures: settings and a Flask app over a temporary data dir, and a real PostgreSQL.

`postgres_url` starts Debian's PostgreSQL once per test session (initdb + pg_ctl as the postgres
user, 127.0.0.1, a free port, in a temporary directory) and stops it at the end;
`postgres_db` gives each test a fresh empty database on it.
"""
from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from console.config import Config, load_config
from console.store import Store

# No session heads started ahead of need in the tests' servers (each idle one is a Ray head's CPU
# and memory): the tests of the pool (tests/sandbox/test_walls_head_pool.py) ask for one.
POOL_OFF = {"CONSOLE_RAY_POOL": "0"}
os.environ.update(POOL_OFF)
# jedi/parso keep parse caches under XDG_CACHE_HOME (the kernel sets its session's folder only
# where none is set): each test process its own, never the home folder that other runs share.
if not os.environ.get("XDG_CACHE_HOME"):
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="console-test-cache-")
    atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)

# The harness is imported as `tests.support` (tests/support/__init__.py says what it holds); the
# repository root is on sys.path under `python -m pytest`, and this makes it so under `pytest` too.
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


# ---------------------------------------------------------------- lanes
# Each test belongs to the lanes it needs, so `make test-quick` can leave the heavy ones out:
# browser (Chromium), ray (a real Ray head or cluster), sandbox (bubblewrap walls against a real
# server), slow (full-size runs). `make test` runs every lane.
_LANE_FOLDERS = {"browser": "browser", "sandbox": "sandbox"}
_RAY_FIXTURES = frozenset({"ray_head", "ray_session", "ray_server", "ray_cfg", "ray_viewer"})
# Files that start a Ray of their own (a second node, an external cluster, the server's own head).
_RAY_FILES = frozenset({"test_two_nodes.py", "test_external_cluster.py", "test_server_owns_ray_head.py",
                        "test_seed.py", "test_seed_notebook.py", "test_ml_ray.py"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        for folder in set(path.relative_to(_ROOT).parts[:-1]) & _LANE_FOLDERS.keys():
            item.add_marker(getattr(pytest.mark, _LANE_FOLDERS[folder]))
        if _RAY_FIXTURES.intersection(getattr(item, "fixturenames", ())) or path.name in _RAY_FILES:
            item.add_marker(pytest.mark.ray)


def pytest_configure(config: pytest.Config) -> None:
    from tests.support import cpu_log

    cpu_log.register(config)  # CONSOLE_TEST_CPU_LOG: each test's CPU, for bench/suite_cpu.py


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`make test` runs `-n N --dist loadscope`: units of work as tests/support/lanes.py says."""
    from tests.support.lanes import LaneScheduling

    return LaneScheduling(config, log) if config.getvalue("dist") == "loadscope" else None


SERVER_LOG_LINES = 60


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed test's report carries the last lines of every server child process's log: a CI
    run's failure is often read only from its output, after its temporary folders are gone."""
    report = yield
    if report.failed:
        from tests.support.live_server import RUNNING

        for server in RUNNING:
            try:
                lines = server.log.read_text(errors="replace").splitlines()[-SERVER_LOG_LINES:]
            except OSError as exc:
                lines = [f"(unreadable: {exc})"]
            report.sections.append((f"server log {server.url} (last {len(lines)} lines)", "\n".join(lines)))
    return report


@pytest.fixture(autouse=True)
def _one_ray_client_test_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests marked `ray_client` take turns, across pytest's workers (and runs) on this machine.

    Each Ray head's Ray Client server gives every client a server process of its own on a port
    from the same fixed range (23000-23999), after checking that the port is free, and the
    process binds it a second or more later. Two heads that did so at once on one machine gave
    the same port, and one head's client was served by the other cluster (run a1: alice's cell,
    mapped to team A, ran on another test's cluster, which had no team). The race is Ray's
    (docs/architecture.md, "Ray Client"); the product's own drivers use the GCS address.
    """
    if request.node.get_closest_marker("ray_client") is None:
        yield
        return
    import fcntl

    with open(Path(tempfile.gettempdir()) / "mlsql-console-tests-ray-client.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _kernels_end_with_their_test() -> Iterator[None]:
    """The kernels a test's notebooks started stop when it ends, in servers that outlive it
    (tests/support/live_server.py end_kernels_since says why)."""
    from tests.support.live_server import end_kernels_since, kernels_now

    before = kernels_now()
    yield
    end_kernels_since(before)


@pytest.fixture(autouse=True, scope="session")
def _socket_clients_close_without_waiting() -> Iterator[None]:
    """The tests' Socket.IO clients close their websocket without a 3 s wait for the echo.

    websocket-client's close() sends the closing frame and then waits up to `timeout` (3 s) for
    the server's answer on the same socket, while python-engineio's reader thread is still
    reading it: that thread usually takes the answer first, and the close sat out the 3 s. The
    server has everything it needs once our closing frame is sent; tests that check what a
    close does (presence left, rooms emptied) wait for that on the server's side.
    """
    import websocket

    close = websocket.WebSocket.close

    def close_soon(self: Any, status: int = websocket.STATUS_NORMAL, reason: Any = b"", timeout: Any = 3) -> None:
        close(self, status, reason, min(timeout, 0.2) if timeout is not None else 0.2)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(websocket.WebSocket, "close", close_soon)
        yield


@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    # The developer's own CONSOLE_* variables must not leak into tests.
    for key in list(os.environ):
        if key.startswith("CONSOLE_"):
            monkeypatch.delenv(key)
    # Single-user mode: the test client is the local admin without logging in (tests/access
    # builds multi-user apps and logs in for real).
    return load_config({"DATA_DIR": str(tmp_path / "data"), "SINGLE_USER": True, "RAY_POOL": 0})


@pytest.fixture
def app(cfg: Config) -> Iterator[Flask]:
    from console.server import create_app

    app = create_app({**cfg, "TESTING": True})
    yield app
    app.extensions["store"].close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of the `postgres` database of a PostgreSQL server private to this test session."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.fail("PostgreSQL is not installed (apt-get install -y postgresql; `make test` does it)")
    bindir = Path(found[-1]).parent
    # initdb refuses to run as root: run the server as the postgres user in a folder it owns.
    as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    base = Path(tempfile.mkdtemp(prefix="console-pg-"))
    data = base / "data"
    if as_pg:
        shutil.chown(base, "postgres", "postgres")
    port = _free_port()

    def pg(*args: str) -> None:
        subprocess.run([*as_pg, *args], check=True, capture_output=True, timeout=120)

    pg(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    opts = f"-h 127.0.0.1 -p {port} -k {base} -F -c max_connections=200"
    pg(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "-o", opts, "start")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        pg(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def postgres_db(postgres_url: str) -> Iterator[str]:
    """URL of a new, empty database on the session's PostgreSQL, dropped after the test."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    admin = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield postgres_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# A store on SQLite in a temporary folder and one on the session's PostgreSQL: a test that takes
# `store` runs on both (tests/store, tests/jobs).
@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'console.db'}"
    return str(request.getfixturevalue("postgres_db"))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store(db_url)
    yield s
    s.close()


# ---------------------------------------------------------------- one Chromium per test session

CHROMIUM = "/usr/bin/chromium"  # Debian's package; `make test` installs it (never `playwright install`)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Chromium driven by Playwright's sync API, shared by every browser test folder.

    Playwright's sync API allows one running instance per thread, so two folders each opening
    their own would fail; this is the one.
    """
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed (apt-get install -y chromium; `make test` does it)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


# ---------------------------------------------------------------- one Ray head per test session


class RayHead(NamedTuple):
    info: Any  # console.cluster.head's head info (address, pids)
    data_dir: str  # a server or runtime on this data dir finds the head as its embedded one
    cfg: Config


@pytest.fixture(scope="session")
def ray_head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayHead]:
    """The test session's one embedded Ray head (2 CPUs on this small machine), stopped by its PIDs.

    It gets a free Ray Client port: 10001 may belong to another cluster on this machine, and a
    cell's `RayContext.connect(globals(), "127.0.0.1:10001")` still reaches this head, because a
    loopback address means "the notebook's own cluster".
    """
    from console.cluster.head import RayCluster
    from console.cluster.procs import free_port

    data_dir = tmp_path_factory.mktemp("ray-head")
    cfg = load_config({"DATA_DIR": str(data_dir), "RAY_NUM_CPUS": 2, "RAY_CLIENT_PORT": free_port()})
    cluster = RayCluster(cfg)
    cluster.own()  # runtimes and servers that use it release it; only this fixture stops it
    info = cluster.ensure()
    yield RayHead(info, str(data_dir), cfg)
    cluster.stop(grace=3.0)


@pytest.fixture
def ray_session(ray_head: RayHead, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A real kernel Session on the test session's Ray head; what it emits is in `.events`."""
    from console.kernel.session import Session

    events: list[Any] = []
    s = Session(load_config(dict(ray_head.cfg)), events.append, session_id=f"t-{uuid.uuid4().hex[:8]}")
    s.events = events  # type: ignore[attr-defined]
    yield s
    s.shutdown()


def stdout_of(session: Any) -> str:
    """What a ray_session's cells printed on stdout."""
    return "".join(e.text for e in session.events if e.type == "output" and e.stream == "stdout")
