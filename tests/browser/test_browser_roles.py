"""Roles on the notebook page: a viewer gets no run or edit controls and cannot type; a runner
can run but not type; neither sees the owner's Share; a reader account gets no Fork, and on the
workspace no New notebook, New folder or Import. The server enforces all of it anyway
(tests/access); this checks the page says so instead of offering buttons that fail. The page
knows the roles only from the server (GET /api/me), so the share dialog offers exactly those."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser_support import Server, logged_in, open_as, reveal, start_login_server, stop_server
from console.roles import ROLE_CAN, ROLES

SOURCE = "select 7 as seven as t;"


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_login_server(tmp_path_factory.mktemp("roles") / "data",
                             users={"alice": "member", "vera": "member", "rudy": "member", "rita": "reader"})
    yield srv
    stop_server(srv)


# Cell buttons a viewer keeps: they change only this page's view (a viewer's clear is not stored).
VIEW_ONLY = "".join(f":not([data-action={a}])" for a in ("collapse-input", "collapse-output", "clear-output"))


def try_to_type(page: Any) -> str:
    """Click into the cell's editor, type, and return what the editor then holds."""
    page.locator("section.cell .cell-editor").first.click()
    page.locator("section.cell .cm-content").first.wait_for()
    page.keyboard.type("drop everything; ")
    page.keyboard.press("Backspace")
    return str(page.locator("section.cell .cm-content").first.inner_text())


@pytest.fixture(scope="module")
def shared_notebook(browser: Any, team_server: Server) -> str:
    ctx, headers = logged_in(browser, team_server, "alice")
    try:
        r = ctx.request.post(team_server.url + "/api/notebooks", headers=headers,
                             data={"name": "team notebook", "folder": "/",
                                   "cells": [{"kind": "mlsql", "source": SOURCE}]})
        assert r.ok, r.text()
        nb_id = r.json()["id"]
        for user, role in (("vera", "viewer"), ("rudy", "runner"), ("rita", "viewer")):
            s = ctx.request.post(f"{team_server.url}/api/notebooks/{nb_id}/shares", headers=headers,
                                 data={"user": user, "role": role})
            assert s.ok, s.text()
        return str(nb_id)
    finally:
        ctx.close()


def test_a_viewer_sees_no_run_or_edit_controls_and_cannot_type(browser: Any, team_server: Server,
                                                                shared_notebook: str) -> None:
    ctx, _ = logged_in(browser, team_server, "vera")
    try:
        page = open_as(ctx, team_server, shared_notebook)
        assert page.locator("#app").get_attribute("data-user-role") == "viewer"
        cell = page.locator("section.cell").first
        # No run, move, insert or delete: only what changes this page's view (collapse, clear).
        assert cell.locator(f".cell-head [data-action]{VIEW_ONLY}").count() == 0
        assert cell.locator("[data-role=kind]").is_disabled()
        for action in ("run-all", "interrupt", "restart", "add-mlsql"):
            assert not page.locator(f"[data-action={action}]").is_visible(), action
        assert not page.locator("[data-sec-action=share]").is_visible()
        assert page.locator("[data-sec-action=history]").is_visible()  # viewers may read history
        assert page.locator("[data-role=name]").get_attribute("readonly") is not None
        assert try_to_type(page) == SOURCE
        assert page.locator("section.cell .cm-content").first.get_attribute("contenteditable") == "false"
        page.keyboard.press("Shift+Enter")  # the run shortcut does nothing either
        page.wait_for_timeout(300)
        assert cell.get_attribute("data-status") in (None, "")
        assert page.locator("[data-role=save-state]").get_attribute("data-state") in (None, "saved")
        assert not page.js_errors
    finally:
        ctx.close()


def test_a_runner_can_run_but_not_type(browser: Any, team_server: Server, shared_notebook: str) -> None:
    rctx, _ = logged_in(browser, team_server, "rudy")
    vctx, _ = logged_in(browser, team_server, "vera")
    try:
        watcher = open_as(vctx, team_server, shared_notebook)  # a viewer watching the same room
        page = open_as(rctx, team_server, shared_notebook)
        assert page.locator("#app").get_attribute("data-user-role") == "runner"
        cell = page.locator("section.cell").first
        for action in ("delete", "move-up", "insert-below"):
            assert cell.locator(f"[data-action={action}]").count() == 0, action
        assert not page.locator("[data-action=add-mlsql]").is_visible()
        assert not page.locator("[data-sec-action=share]").is_visible()
        assert page.locator("[data-action=run-all]").is_visible()
        assert try_to_type(page) == SOURCE
        cell.locator(".cell-head [data-action=run]").click()
        cell.locator("[data-role=result]").wait_for()
        assert "7" in cell.locator("[data-role=result]").inner_text()
        assert page.locator("#app").get_attribute("data-kernel") in ("idle", "busy")
        # The viewer sees the runner's output live, and the notebook's one shared kernel with it;
        # the cell says who ran it.
        watcher.locator("section.cell [data-role=result]").wait_for()
        assert watcher.locator("[data-role=kernel]").get_attribute("data-status") in ("idle", "busy")
        assert watcher.locator("section.cell [data-role=run-by]").first.inner_text() == "run by rudy"
        assert not page.js_errors and not watcher.js_errors
    finally:
        rctx.close()
        vctx.close()


def test_the_share_dialog_offers_the_roles_the_server_serves(browser: Any, team_server: Server,
                                                             shared_notebook: str) -> None:
    ctx, _ = logged_in(browser, team_server, "alice")
    try:
        page = open_as(ctx, team_server, shared_notebook)
        assert page.locator("#app").get_attribute("data-user-role") == "owner"
        page.click("[data-sec-action=share]")
        picker = page.locator("[data-role=share-dialog] form [data-role=share-role]")
        options = picker.locator("option")
        assert options.evaluate_all("os => os.map(o => o.value)") == list(ROLES)
        assert options.all_inner_texts() == [f"{r} ({ROLE_CAN[r]})" for r in ROLES]
        assert picker.input_value() == ROLES[0]  # the weakest role unless the owner picks another
        # Each share's own picker shows its role: rudy's share (runner) from the fixture.
        rudy = page.locator("[data-role=shares] li[data-user=rudy] [data-role=share-role]")
        assert rudy.input_value() == "runner"
        assert not page.js_errors
    finally:
        ctx.close()


def test_a_reader_account_gets_no_fork_run_new_or_import(browser: Any, team_server: Server,
                                                          shared_notebook: str) -> None:
    ctx, _ = logged_in(browser, team_server, "rita")
    vctx, _ = logged_in(browser, team_server, "vera")
    try:
        page = open_as(ctx, team_server, shared_notebook)
        assert page.locator("#app").get_attribute("data-user-role") == "viewer"
        for action in ("run-all", "interrupt", "restart", "add-mlsql"):
            assert not page.locator(f"[data-action={action}]").is_visible(), action
        assert page.locator("section.cell").first.locator(f".cell-head [data-action]{VIEW_ONLY}").count() == 0
        assert not reveal(page, "[data-sec-action=fork]").is_visible()  # (in the toolbar's More menu)
        assert page.locator("[data-sec-action=history]").is_visible()  # reading is what a reader does
        viewer = open_as(vctx, team_server, shared_notebook)  # a member viewer still may fork
        assert reveal(viewer, "[data-sec-action=fork]").is_visible()

        page.goto(team_server.url + "/")
        page.wait_for_selector("#app[data-ready='1']", state="attached")
        for action in ("new-notebook", "new-folder", "import"):
            assert not page.locator(f"[data-action={action}]").is_visible(), action
        assert page.locator("li.row.notebook").count() == 1  # the shared notebook is listed ...
        assert page.locator("li.row.notebook [data-action]").count() == 0  # ... with no write actions
        assert not page.js_errors and not viewer.js_errors
    finally:
        ctx.close()
        vctx.close()
