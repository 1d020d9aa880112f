"""Browser tests: Debian's Chromium driven by Playwright against a real server on 127.0.0.1.

`server` runs the production gunicorn server in a child process over a temporary data dir
(tests/support/live_server.py); its kernels run the real engine plus scripted `--script` cells
(tests/support/scripted_engine.py). `browser` is one headless Chromium per test session
(tests/conftest.py); `page` a fresh context. Chromium comes from apt (`make test` installs it);
never `playwright install`.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_server import REAL_KERNEL, ServerProcess, start_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    base = tmp_path_factory.mktemp("browser")
    srv = start_server(base / "data")
    yield srv
    srv.stop()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    # The tests' own probes (wait_for_function) evaluate strings, which the page's CSP forbids;
    # tests/browser/test_browser_page_policy.py runs the page under its CSP.
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
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
    said: deque[str] = deque(maxlen=40)  # the page's own warnings and errors, for a failure's report
    pg.on("console", lambda m: said.append(f"{m.type}: {m.text}") if m.type in ("warning", "error") else None)
    yield pg
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        print(f"page errors: {errors}; the page's last console warnings and errors:", *said, sep="\n")
        # A failing browser test leaves a picture of the page behind.
        shot = tmp_path / "failure.png"
        try:
            pg.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failing page: {shot}")
        except Exception:  # the page may be gone
            pass


@pytest.fixture
def open_notebook(server: ServerProcess) -> Any:
    """open_notebook(page, notebook_id): load it and wait until interactive and joined to its room."""

    def go(page: Any, notebook_id: str) -> None:
        page.goto(f"{server.url}/notebooks/{notebook_id}")
        page.wait_for_selector("#app[data-ready='1']", state="attached")
        page.wait_for_selector("#app[data-connection='live']", state="attached")

    return go


@pytest.fixture(scope="session")
def ray_server(ray_head: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server whose kernels run the real engine on the test session's Ray head on loopback, as
    `make run` does: the server runs on the head's data dir (with its own database), so it finds
    the head as its embedded one.

    Not CONSOLE_RAY_ADDRESS: that marks an external cluster, whose drivers use Ray's normal
    addressing (the machine's IP), and a loopback-only head does not answer there.
    """
    own = tmp_path_factory.mktemp("browser-ray-server")
    srv = start_server(Path(ray_head.data_dir), {
        "CONSOLE_DATABASE_URL": f"sqlite:///{own / 'console.db'}",  # a shared data dir, not its database
        "CONSOLE_RAY_CLUSTERS": "shared",  # the test session's head, not a head per notebook
    }, kernel_module=REAL_KERNEL)
    try:
        yield srv
    finally:
        srv.stop()
