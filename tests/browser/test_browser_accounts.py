"""Accounts in the UI, in Chromium, as two people would use them: who is logged in, changing one's
password (a wrong current one is refused in the dialog), logging out, the workspace's owner column
and "Shared with me", and a viewer who is offered no Rename, Move, Delete, Share or Save version."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser_support import PASSWORD, Server, logged_in, reveal, start_login_server, stop_server


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_login_server(tmp_path_factory.mktemp("accounts") / "data",
                             users={"alice": "member", "vera": "member", "paula": "member"})
    yield srv
    stop_server(srv)


def workspace(ctx: Any, server: Server, query: str = "") -> Any:
    page = ctx.new_page()
    page.js_errors = []
    page.on("pageerror", lambda e: page.js_errors.append(str(e)))
    page.goto(f"{server.url}/{query}")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    return page


def test_who_is_logged_in_password_change_and_logout(browser: Any, team: Server) -> None:
    ctx, _ = logged_in(browser, team, "paula")
    page = workspace(ctx, team)
    assert page.locator("[data-role=account-name]").inner_text() == "paula"
    assert page.locator("[data-role=account-role]").inner_text() == "member"

    page.click("[data-sec-action=password]")
    dialog = page.locator("[data-role=password-dialog]")
    dialog.locator("[data-role=password-current]").fill("not my password")
    dialog.locator("[data-role=password-new]").fill("a new long secret")
    dialog.locator("[data-role=password-again]").fill("a new long secret")
    dialog.locator("[data-sec-action=change-password]").click()
    assert "old password is wrong" in dialog.locator("[role=alert]").inner_text()
    dialog.locator("[data-role=password-current]").fill(PASSWORD)
    dialog.locator("[data-sec-action=change-password]").click()
    dialog.locator("[data-role=password-done]").wait_for()
    dialog.locator("[data-sec-action=close]").click()
    # The page keeps working with the new login it was given (its CSRF token changed too).
    page.click("[data-action=new-folder]")
    page.fill("[data-role=dialog-input]", "after-change")
    page.click("[data-role=dialog-ok]")
    page.locator(".tree a", has_text="after-change").wait_for()

    page.click("[data-sec-action=logout]")
    page.wait_for_url("**/login**")
    assert ctx.request.get(team.url + "/api/me").json()["user"] is None
    other = browser.new_context()
    assert not other.request.post(team.url + "/api/login", data={"username": "paula", "password": PASSWORD}).ok
    assert other.request.post(team.url + "/api/login", data={"username": "paula", "password": "a new long secret"}).ok
    other.close()
    assert not page.js_errors
    ctx.close()


def test_owner_column_shared_with_me_and_controls_by_role(browser: Any, team: Server) -> None:
    alice, headers = logged_in(browser, team, "alice")
    make = alice.request.post(team.url + "/api/notebooks", headers=headers,
                              data={"name": "alice shares this", "folder": "/alice-team", "cells": []})
    nb = make.json()
    r = alice.request.post(f"{team.url}/api/notebooks/{nb['id']}/shares", headers=headers,
                           data={"user": "vera", "role": "viewer"})
    assert r.ok, r.text()

    page = workspace(alice, team, "?folder=/alice-team")
    row = page.locator("li.row.notebook", has_text="alice shares this")
    assert row.locator("[data-role=owner]").inner_text() == "me"
    for action in ("rename", "move", "share", "delete"):
        assert row.locator(f"[data-action={action}]").count() == 1, action

    vera, _ = logged_in(browser, team, "vera")
    vpage = workspace(vera, team)
    vpage.click("[data-role=section-shared]")
    vpage.wait_for_selector("#app[data-section=shared]", state="attached")
    row = vpage.locator("li.row.notebook", has_text="alice shares this")
    row.wait_for()
    assert row.locator("[data-role=owner]").inner_text() == "alice"
    assert row.locator("[data-role=nb-role]").inner_text() == "viewer"
    for action in ("rename", "move", "share", "delete"):
        assert row.locator(f"[data-action={action}]").count() == 0, action
    # Reloading keeps the section (it is in the URL).
    vpage.reload()
    vpage.wait_for_selector("#app[data-ready='1'][data-section=shared]", state="attached")

    npage = vera.new_page()
    npage.goto(f"{team.url}/notebooks/{nb['id']}")
    npage.wait_for_selector("#app[data-ready='1']", state="attached")
    assert reveal(npage, "[data-role=account-name]").inner_text() == "vera"  # in the More menu
    for action in ("share", "save-version"):
        assert not npage.locator(f"[data-sec-action={action}]").is_visible(), action
    assert npage.locator("[data-sec-action=history]").is_visible()
    assert not vpage.js_errors
    alice.close()
    vera.close()
