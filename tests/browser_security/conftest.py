"""XSS tests in a real browser: Debian's Chromium (Playwright, sync API) against `mlsql-console serve`
in a child process, multi-user, with notebooks and stored runs seeded straight into its database.

Chromium comes from apt; never `playwright install`.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
PASSWORD = "correct horse battery"
# Each payload bumps window.__xss if it ever runs.
PAYLOADS = [
    '<img src=x onerror="window.__xss=(window.__xss||0)+1">',
    "<script>window.__xss=(window.__xss||0)+1</script>",
    '<svg onload="window.__xss=(window.__xss||0)+1"></svg>',
    '<iframe srcdoc="<script>parent.__xss=(parent.__xss||0)+1</script>"></iframe>',
    '"><a href="javascript:window.__xss=1" id="xss-link">x</a>',
]
XSS = "".join(PAYLOADS)


@dataclass
class Server:
    url: str
    data_dir: Path
    proc: subprocess.Popen[bytes]

    def store(self) -> Any:
        from console.store import Store

        return Store(f"sqlite:///{self.data_dir / 'console.db'}", run_migrations=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _build_assets() -> None:
    dist = REPO / "console" / "web" / "static" / "dist" / "main.js"
    newest = max(p.stat().st_mtime for p in (REPO / "frontend" / "src").rglob("*") if p.is_file())
    if not dist.exists() or dist.stat().st_mtime < newest:
        subprocess.run(["npm", "run", "--silent", "build"], cwd=REPO / "frontend", check=True, timeout=180)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    _build_assets()
    data = tmp_path_factory.mktemp("xss") / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONSOLE_")}
    env["CONSOLE_SINGLE_USER"] = "false"
    for name in ("alice", "vera"):
        subprocess.run([sys.executable, "-m", "console", "users", "add", name, "--password", PASSWORD,
                        "--data-dir", str(data)], cwd=REPO, env=env, check=True, capture_output=True, timeout=60)
    port = _free_port()
    log = open(data.parent / "server.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([sys.executable, "-m", "console", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--data-dir", str(data), "--threads", "16"],
                            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}; see {log.name}")
        try:
            urllib.request.urlopen(url + "/api/health", timeout=2).read()
            break
        except (urllib.error.URLError, OSError):
            if time.time() > deadline:
                proc.kill()
                raise
            time.sleep(0.2)
    yield Server(url, data, proc)
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed (apt-get install -y chromium; `make test` does it)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    """A page logged in as alice; `page.dialogs` records any alert/confirm/prompt that opens."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(20000)
    r = ctx.request.post(server.url + "/api/login", data={"username": "alice", "password": PASSWORD})
    assert r.ok, r.text()
    pg = ctx.new_page()
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    ctx.close()


def assert_inert(page: Any) -> None:
    """Nothing executed, and nothing executable made it into the DOM."""
    page.wait_for_timeout(300)  # let any onerror/onload fire
    assert page.evaluate("window.__xss") is None
    assert page.dialogs == []
    active = page.evaluate("""() => document.querySelectorAll(
        '[onerror], [onload], iframe, script:not([src]), a[href^="javascript:"]').length""")
    assert active == 0
