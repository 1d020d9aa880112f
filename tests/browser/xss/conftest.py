"""XSS tests in a real browser: Debian's Chromium (Playwright, sync API) against the production
gunicorn server in a child process (tests/support/live_server.py), multi-user, its kernels the
real engine, with notebooks and stored runs seeded straight into its database.

Chromium comes from apt; never `playwright install`.
"""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.live_server import REAL_KERNEL, REPO, ServerProcess, server_env, start_server
from xss_support import PASSWORD

MULTI_USER = {"CONSOLE_SINGLE_USER": "false"}


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data = tmp_path_factory.mktemp("xss") / "data"
    for name in ("alice", "vera"):
        subprocess.run([sys.executable, "-m", "console", "users", "add", name, "--password", PASSWORD,
                        "--data-dir", str(data)], cwd=REPO, env=server_env(MULTI_USER), check=True,
                       capture_output=True, timeout=60)
    srv = start_server(data, MULTI_USER, kernel_module=REAL_KERNEL, threads=16)
    yield srv
    srv.stop()


@pytest.fixture
def page(browser: Any, server: ServerProcess) -> Iterator[Any]:
    """A page logged in as alice; `page.dialogs` records any alert/confirm/prompt that opens."""
    # Without the CSP: these tests check the escaping itself (the CSP, a second wall, would hide
    # a payload that got through; tests/browser/test_browser_page_policy.py tests the CSP).
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    ctx.set_default_timeout(20000)
    r = ctx.request.post(server.url + "/api/login", data={"username": "alice", "password": PASSWORD})
    assert r.ok, r.text()
    pg = ctx.new_page()
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    ctx.close()
