"""Logging in through the login page, then working with the CSRF token: autosave, runs, sockets."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from browser_support import Server, start_login_server, stop_server


@pytest.fixture(scope="module")
def login_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_login_server(tmp_path_factory.mktemp("login") / "data")
    yield srv
    stop_server(srv)


def test_login_then_edit_and_run_with_the_csrf_token(page: Any, login_server: Server) -> None:
    page.goto(login_server.url + "/")
    page.wait_for_url(re.compile(r"/login\?next="))
    page.wait_for_selector("body[data-ready='1']", state="attached")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "wrong password")
    page.click("button[type=submit]")
    page.locator(".login-error").wait_for()
    assert "wrong" in page.locator(".login-error").inner_text()
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    page.wait_for_selector("#app[data-page=workspace][data-ready='1']", state="attached")

    page.click("[data-action=new-notebook]")
    page.fill("[data-role=dialog-input]", "alice's notebook")
    page.click("[data-role=dialog-ok]")
    page.wait_for_url(re.compile(r"/notebooks/"))
    page.wait_for_selector("#app[data-connection='live']", state="attached")
    page.locator("section.cell .cm-content").click()
    page.keyboard.type("select 7 as seven as t;")
    page.keyboard.press("Control+Enter")
    page.locator("section.cell [data-role=result]").wait_for()
    assert page.locator("[data-role=save-state]").get_attribute("data-state") == "saved"
    assert not page.js_errors
