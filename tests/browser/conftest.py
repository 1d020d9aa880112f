"""Browser tests: Debian's Chromium driven by Playwright against a real server on 127.0.0.1.

`server` runs `mlsql-console serve` (the production gunicorn server) in a child process over a
temporary data dir; its kernels use browser_engine.py, which adds scripted `--script` cells to
the real engine. `browser` is one headless Chromium per test session; `page` a fresh context.
Chromium comes from apt (`make test` installs it); never `playwright install`.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DIST = REPO / "console" / "web" / "static" / "dist" / "main.js"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A running server: its URL, data dir, and a few JSON API helpers for seeding."""

    def __init__(self, url: str, data_dir: Path, proc: subprocess.Popen[bytes]) -> None:
        self.url, self.data_dir, self.proc = url, data_dir, proc

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + "/api" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def notebook(self, name: str, *sources: str | tuple[str, str], folder: str = "/") -> dict[str, Any]:
        """Create a notebook; a plain string is an MLSQL cell, a (kind, source) pair any kind."""
        cells = [{"kind": "mlsql", "source": s} if isinstance(s, str) else {"kind": s[0], "source": s[1]}
                 for s in sources]
        return self.api("POST", "/notebooks", {"name": name, "folder": folder, "cells": cells})  # type: ignore[no-any-return]


def build_assets() -> None:
    """The bundle must exist and be newer than every source file (make test builds it too)."""
    src = REPO / "frontend" / "src"
    newest = max(p.stat().st_mtime for p in src.rglob("*") if p.is_file())
    if not DIST.exists() or DIST.stat().st_mtime < newest:
        subprocess.run(["npm", "run", "--silent", "build"], cwd=REPO / "frontend", check=True, timeout=120)


def start_server(data_dir: Path, extra_env: dict[str, str] | None = None) -> Server:
    build_assets()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONSOLE_")}
    env.update({
        "CONSOLE_KERNEL_ENGINE": "browser_engine:BrowserScriptSession",
        "CONSOLE_SINGLE_USER": "true",  # the server listens on 127.0.0.1 only; login has its own test
        "PYTHONPATH": os.pathsep.join([str(HERE), str(REPO), env.get("PYTHONPATH", "")]),
        **(extra_env or {}),
    })
    log = open(data_dir.parent / "server.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [sys.executable, "-m", "console", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(data_dir), "--threads", "32"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}; see {log.name}")
        try:
            urllib.request.urlopen(url + "/api/health", timeout=2).read()
            return Server(url, data_dir, proc)
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("server did not answer within 60 s")


def stop_server(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(timeout=10)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("browser")
    srv = start_server(base / "data")
    yield srv
    stop_server(srv)


def launch_chromium(playwright: Any) -> Any:
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed (apt-get install -y chromium; `make test` does it)")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(20000)
    yield ctx
    ctx.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


@pytest.fixture
def page(context: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.js_errors = errors  # tests assert the page threw nothing
    yield pg
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        # A failing browser test leaves a picture of the page behind.
        shot = tmp_path / "failure.png"
        try:
            pg.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failing page: {shot}; page errors: {errors}")
        except Exception:  # noqa: BLE001 - the page may be gone
            pass


@pytest.fixture
def open_notebook(server: Server) -> Any:
    """open_notebook(page, notebook_id): load it and wait until interactive and joined to its room."""

    def go(page: Any, notebook_id: str) -> None:
        page.goto(f"{server.url}/notebooks/{notebook_id}")
        page.wait_for_selector("#app[data-ready='1']", state="attached")
        page.wait_for_selector("#app[data-connection='live']", state="attached")

    return go


@pytest.fixture(scope="session")
def ray_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose kernels use a real Ray head on loopback, as `make run` does: another room's
    head of this test session when one runs (one Ray per test session on this small machine),
    found through its data dir; otherwise the server starts its own at first need. Either way the
    server stops the head when it exits, which for a shared one is at the end of the session.

    Not CONSOLE_RAY_ADDRESS: that marks an external cluster, whose drivers use Ray's normal
    addressing (the machine's IP), and a loopback-only head does not answer there.
    """
    from console.runtime.cluster import RayCluster
    from console.runtime.cluster import free_port as ray_free_port

    base = tmp_path_factory.getbasetemp()
    shared = next((state.parent for state in sorted([*base.glob("rt-data*/ray"), *base.glob("sessions-ray*/ray")])
                   if RayCluster({"DATA_DIR": str(state.parent)}).running() is not None), None)
    own = tmp_path_factory.mktemp("browser-ray-server")
    data = shared or own / "data"
    srv = start_server(data, {
        "CONSOLE_KERNEL_ENGINE": "",
        "CONSOLE_DATABASE_URL": f"sqlite:///{own / 'console.db'}",  # a shared data dir, not its database
        "CONSOLE_RAY_NUM_CPUS": "2",
        "CONSOLE_RAY_CLIENT_PORT": str(ray_free_port()),  # 10001 may be someone else's on this machine
    })
    try:
        yield srv
    finally:
        stop_server(srv)
        if shared is None:
            RayCluster({"DATA_DIR": str(data)}).stop()  # in case the server died before stopping its head
