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

from xss_support import REPO, PASSWORD, PAYLOADS, XSS, Server, _free_port, _build_assets, assert_inert  # noqa: F401

# Each payload bumps window.__xss if it ever runs.


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


