"""The page's policy in a real browser: no remote Markdown images unless the setting allows them,
no Content-Security-Policy violation from the app's own page, and no open redirect after login."""
from __future__ import annotations

import http.server
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from browser_support import Server, start_login_server, start_server, stop_server

# A 1x1 transparent PNG.
PIXEL = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478"
                      "9c6360000002000154a24f5d0000000049454e44ae426082")


class Pixels:
    """Another site on 127.0.0.1: serves a pixel for any path and remembers what was asked."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PIXEL)))
                self.end_headers()
                self.wfile.write(PIXEL)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def pixels() -> Iterator[Pixels]:
    p = Pixels()
    yield p
    p.httpd.shutdown()


def _markdown(pixels: Pixels) -> str:
    return (f"# Images\n\n![tracker]({pixels.url}/md.png)\n\n"
            f"<img src=\"//127.0.0.1:{pixels.httpd.server_port}/raw.png\" alt=\"raw\">\n\n"
            f"<img src=\"{pixels.url}/set.png\" srcset=\"{pixels.url}/srcset.png 2x\">")


@pytest.fixture
def strict_page(browser: Any) -> Iterator[Any]:
    """A page under the server's CSP (the shared `page` fixture bypasses it for the tests' probes)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(20000)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.js_errors = errors
    yield page
    ctx.close()


def _watch_csp(page: Any) -> list[str]:
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    return violations


def test_remote_markdown_images_are_not_fetched(strict_page: Any, server: Server, open_notebook: Any,
                                                pixels: Pixels) -> None:
    page = strict_page
    violations = _watch_csp(page)
    nb = server.notebook("images", ("markdown", _markdown(pixels)), "select 1 as a, 'x' as b as t;")
    open_notebook(page, nb["id"])
    view = page.locator("section.cell >> nth=0").locator("[data-role=markdown]")
    view.locator("h1").wait_for()
    images = view.locator("img")
    assert images.count() == 3
    for i in range(3):
        img = images.nth(i)
        assert img.get_attribute("src") is None and img.get_attribute("srcset") is None
        assert img.get_attribute("data-remote-src", timeout=1000).startswith(("http://127.0.0.1", "//127.0.0.1"))
    # The page itself runs within its policy: a result table and the editor raise no violation.
    page.locator("section.cell >> nth=1").locator(".cm-content").click()
    page.keyboard.press("Control+Enter")
    page.locator("section.cell >> nth=1").locator("[data-role=result]").wait_for()
    time.sleep(1.0)
    assert pixels.hits == [], pixels.hits
    assert violations == [] and not page.js_errors, (violations, page.js_errors)


def test_remote_markdown_images_load_when_the_setting_allows(strict_page: Any, pixels: Pixels,
                                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    page = strict_page
    data = tmp_path_factory.mktemp("remote-images") / "data"
    srv = start_server(data, {"CONSOLE_MARKDOWN_REMOTE_IMAGES": "true"})
    try:
        nb = srv.notebook("images", ("markdown", _markdown(pixels)))
        page.goto(f"{srv.url}/notebooks/{nb['id']}")
        page.wait_for_selector("#app[data-ready='1']", state="attached")
        deadline = time.monotonic() + 10
        while "/md.png" not in pixels.hits and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "/md.png" in pixels.hits and "/raw.png" in pixels.hits, pixels.hits
        assert "/srcset.png" not in pixels.hits  # srcset is never kept: one address per image
    finally:
        stop_server(srv)


@pytest.fixture(scope="module")
def login_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_login_server(tmp_path_factory.mktemp("redirect") / "data")
    yield srv
    stop_server(srv)


@pytest.mark.parametrize("bad", ["%2F%09%2Fevil.example%2Fx", "%2F%0A%2Fevil.example", "%2F%5Cevil.example"])
def test_login_never_sends_the_browser_off_site(page: Any, login_server: Server, bad: str) -> None:
    page.goto(f"{login_server.url}/login?next={bad}")
    page.wait_for_selector("body[data-ready='1']", state="attached")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"^(?!" + re.escape(f"{login_server.url}/login") + ")"), timeout=10000)
    assert page.url == f"{login_server.url}/", page.url
    page.wait_for_selector("#app[data-page=workspace][data-ready='1']", state="attached")


def test_a_same_site_next_is_followed(page: Any, login_server: Server) -> None:
    page.goto(f"{login_server.url}/notebooks/nope")
    page.wait_for_url(re.compile(r"/login\?next="))
    page.wait_for_selector("body[data-ready='1']", state="attached")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    page.wait_for_url(f"{login_server.url}/notebooks/nope")


