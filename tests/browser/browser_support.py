"""The browser tests' names for the one live-server harness (tests/support/live_server.py).

`start_server(data_dir, env)` serves with gunicorn in a child process whose kernels run the
scripted engine (tests/support/scripted_engine.py); `Server` is its handle.
`start_login_server` is one in login mode with accounts made through the CLI; `logged_in` and
`open_as` are a browser context signed in as one of them and a notebook page opened in it.
`shown_text` reads an element's text as the page shows it.
"""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support.live_server import REPO, ServerProcess as Server, start_server, stop_server

__all__ = ["PASSWORD", "REPO", "Server", "logged_in", "open_as", "reveal", "shown_text", "start_login_server",
           "start_server", "stop_server"]

PASSWORD = "correct horse"


def start_login_server(data: Path, user: str = "alice", password: str = PASSWORD,
                       users: Mapping[str, str] | None = None) -> Server:
    """A server in login mode (no single-user mode); users: name -> site role, else one member `user`."""
    data.mkdir(parents=True, exist_ok=True)
    for name, role in (users or {user: "member"}).items():
        subprocess.run([sys.executable, "-m", "console", "users", "add", name, "--role", role, "--password", password,
                        "--data-dir", str(data)], cwd=REPO, check=True, capture_output=True, timeout=60)
    return start_server(data, {"CONSOLE_SINGLE_USER": "false"})


def logged_in(browser: Any, server: Server, name: str, password: str = PASSWORD) -> tuple[Any, dict[str, str]]:
    """A browser context logged in as `name`, and the headers its API writes need."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(20000)
    r = ctx.request.post(server.url + "/api/login", data={"username": name, "password": password})
    assert r.ok, r.text()
    return ctx, {"X-CSRF-Token": r.json()["csrf_token"]}


def open_as(ctx: Any, server: Server, notebook_id: str) -> Any:
    """A notebook page in ctx, ready and live; its JavaScript errors are collected in page.js_errors."""
    page = ctx.new_page()
    page.js_errors = []
    page.on("pageerror", lambda e: page.js_errors.append(str(e)))
    page.goto(f"{server.url}/notebooks/{notebook_id}")
    page.wait_for_selector("#app[data-ready='1'][data-connection='live']", state="attached")
    return page


def reveal(page: Any, selector: str) -> Any:
    """The toolbar control `selector`, with the drop-down menu holding it opened (frontend/src/menu.js)."""
    target = page.locator(selector).first
    menu = page.locator(f"details.menu:has({selector})")
    if menu.count() and menu.first.get_attribute("open") is None:
        menu.first.locator("summary").click()
    return target


def shown_text(locator: Any) -> str:
    """The element's innerText once the browser has laid it out. Cells are `content-visibility:
    auto` (frontend/src/style.css): a cell just added or moved is skipped until the browser's next
    rendering step, and until then its innerText is empty though its HTML is there (a CI failure)."""
    handle = locator.element_handle()
    locator.page.wait_for_function("(e) => e.checkVisibility({contentVisibilityAuto: true})", arg=handle)
    return str(locator.inner_text())
