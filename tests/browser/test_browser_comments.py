"""Comments on cells in the browser (frontend/src/comments.js, issue 34 item 4): alice comments on
the text she selected in a cell, vera (a viewer, logged in apart) sees the thread appear live,
opens it from the keyboard, finds the comment shown as text (a script in it stays text) and
replies; alice sees the reply and resolves the thread, and vera's page follows."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import Server, logged_in, open_as, start_login_server, stop_server

SOURCE = "select 1 as a;"
HOSTILE = '<img src=x onerror="window.pwned=1">Why select 1?'


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_login_server(tmp_path_factory.mktemp("comments") / "data",
                             users={"alice": "member", "vera": "member"})
    yield srv
    stop_server(srv)


def _notebook(browser: Any, server: Server) -> str:
    ctx, headers = logged_in(browser, server, "alice")
    try:
        cells = [{"kind": "mlsql", "source": SOURCE}, {"kind": "markdown", "source": "# notes"}]
        r = ctx.request.post(server.url + "/api/notebooks", headers=headers, data={"name": "reviewed", "cells": cells})
        assert r.ok, r.text()
        nb = str(r.json()["id"])
        s = ctx.request.post(f"{server.url}/api/notebooks/{nb}/shares", headers=headers,
                             data={"user": "vera", "role": "viewer"})
        assert s.ok, s.text()
        return nb
    finally:
        ctx.close()


def test_a_comment_reaches_a_viewer_who_replies_and_the_author_resolves(browser: Any, team_server: Server) -> None:
    nb = _notebook(browser, team_server)
    actx, _ = logged_in(browser, team_server, "alice")
    vctx, _ = logged_in(browser, team_server, "vera")
    try:
        alice = open_as(actx, team_server, nb)
        vera = open_as(vctx, team_server, nb)
        assert vera.locator("#app").get_attribute("data-user-role") == "viewer"
        a_cell, v_cell = alice.locator("section.cell").first, vera.locator("section.cell").first
        for page in (alice, vera):
            page.wait_for_function("() => window.consolePage.comments")

        # alice selects "select" in the cell and comments on it.
        a_cell.locator(".cell-editor").click()
        a_cell.locator(".cm-content").wait_for()
        alice.keyboard.press("Control+Home")
        for _ in range(6):
            alice.keyboard.press("Shift+ArrowRight")
        a_cell.locator("[data-role=comments-toggle]").click()
        panel = a_cell.locator("[data-role=comment-panel]")
        assert panel.is_visible()
        assert panel.locator("[data-role=comment-anchor] q").inner_text() == "select"
        box = panel.locator("[data-role=comment-text]")
        assert box.evaluate("b => b === document.activeElement")  # the panel opens at its text box
        alice.keyboard.type(HOSTILE)
        alice.keyboard.press("Control+Enter")
        thread = panel.locator("[data-role=comment-thread]")
        thread.wait_for()
        assert thread.locator("[data-role=comment-quote]").inner_text() == "select"
        # Emptied once the server took it, even when its comment event drew the thread again first
        # (the redraw used to carry the sent text over into the new box as a draft, for good).
        alice.wait_for_function("() => document.querySelector('section.cell [data-role=comment-text]').value === ''")
        assert a_cell.locator("[data-role=comment-count]").inner_text() == "1"
        assert SOURCE in a_cell.locator(".cm-content").inner_text()  # typing in the panel never reached the cell

        # vera's page shows the count without a reload; she opens the thread from the keyboard.
        v_count = v_cell.locator("[data-role=comment-count]")
        vera.wait_for_function("(el) => el.textContent === '1'", arg=v_count.element_handle())
        assert "1 open thread" in (v_cell.locator("[data-role=comments-toggle]").get_attribute("aria-label") or "")
        v_cell.locator("[data-role=comments-toggle]").focus()
        vera.keyboard.press("Enter")
        v_panel = v_cell.locator("[data-role=comment-panel]")
        v_thread = v_panel.locator("[data-role=comment-thread]")
        v_thread.wait_for()
        assert v_cell.locator("[data-role=comments-toggle]").get_attribute("aria-expanded") == "true"
        shown = v_thread.locator("[data-role=comment-text-shown]").first
        assert shown.inner_text() == HOSTILE  # shown as text: no element made of it, nothing ran
        assert v_panel.locator("img").count() == 0 and vera.evaluate("() => window.pwned") is None
        assert v_thread.locator("[data-role=comment-author]").first.inner_text() == "alice"
        assert v_thread.locator("[data-role=comment-edit], [data-role=comment-delete]").count() == 0  # not hers
        v_thread.locator("[data-role=reply-text]").fill("A smoke test, from vera")
        v_thread.locator("[data-role=reply-send]").click()
        vera.wait_for_function("() => document.querySelectorAll('[data-role=comment-text-shown]').length === 2")
        if os.environ.get("UPDATE_SCREENSHOTS") == "1":  # docs/img/comments.png, for the README
            vera.set_viewport_size({"width": 1200, "height": 700})
            vera.screenshot(path=str(Path(__file__).parents[2] / "docs" / "img" / "comments.png"))
        assert v_cell.locator("[data-role=comment-count]").inner_text() == "1"  # replies are no new thread
        # Her own reply she may edit or delete; the cell itself she still cannot edit.
        mine = v_thread.locator(".comment[data-mine='1']")
        assert mine.locator("[data-role=comment-edit]").count() == 1
        assert v_cell.locator(".cm-content").count() == 0 or \
            v_cell.locator(".cm-content").get_attribute("contenteditable") == "false"

        # alice's open panel gets the reply live; she resolves the thread, and vera's page follows.
        alice.wait_for_function(
            "() => [...document.querySelectorAll('[data-role=comment-text-shown]')]"
            ".some((e) => e.textContent === 'A smoke test, from vera')")
        thread.locator("[data-role=thread-resolve]").click()
        resolved = "() => document.querySelector('[data-role=comment-thread]')?.dataset.state === 'resolved'"
        alice.wait_for_function(resolved)
        vera.wait_for_function(resolved)
        assert v_thread.locator(".comment-status").inner_text() == "Resolved by alice"
        assert v_count.inner_text() == "" and a_cell.locator("[data-role=comment-count]").inner_text() == ""
        assert v_thread.locator("[data-role=thread-reopen]").is_visible()  # any commenter may reopen
        assert not alice.js_errors and not vera.js_errors
    finally:
        actx.close()
        vctx.close()


def test_a_sent_comment_leaves_its_box_empty_when_the_servers_event_comes_first(
        browser: Any, team_server: Server) -> None:
    nb = _notebook(browser, team_server)
    actx, _ = logged_in(browser, team_server, "alice")
    try:
        alice = open_as(actx, team_server, nb)
        alice.wait_for_function("() => window.consolePage.comments")
        held: list[Any] = []

        def hold_the_answer(route: Any) -> None:
            if route.request.method != "POST":
                route.continue_()
                return
            held.append((route, route.fetch()))  # the server took it (and sent its event); the page waits

        alice.route("**/comments", hold_the_answer)
        cell = alice.locator("section.cell").first
        cell.locator("[data-role=comments-toggle]").click()
        panel = cell.locator("[data-role=comment-panel]")
        panel.locator("[data-role=comment-text]").fill("first thought")
        alice.keyboard.press("Control+Enter")
        # The server's comment event draws the thread while the page still waits for the answer:
        # the redraw carries "first thought" over into the new box as a draft.
        panel.locator("[data-role=comment-thread]").wait_for()
        assert panel.locator("[data-role=comment-text]").input_value() == "first thought"
        route, response = held[0]
        route.fulfill(response=response)
        # The answer empties whichever box holds the sent text now (it used to empty the old one only).
        alice.wait_for_function("() => document.querySelector('section.cell [data-role=comment-text]').value === ''")
        alice.unroute("**/comments")
    finally:
        actx.close()
