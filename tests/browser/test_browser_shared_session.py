"""One notebook, one session, two people, in Chromium against a real server in login mode.

ada runs `select … as t`, bob (an editor) runs the next cell that reads t and gets ada's rows;
both pages say the cell was run by bob. ada opens the Running page, sees the session she started
with its memory, and shuts it down; bob's page says who did. With UPDATE_SCREENSHOTS=1 a screenshot
of the Running page goes to docs/img. The server's half is tests/access/test_shared_session_live.py.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import Server, logged_in, open_as, start_login_server, stop_server

IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_login_server(tmp_path_factory.mktemp("shared") / "data", users={"ada": "member", "bob": "member"})
    yield srv
    stop_server(srv)


def cell(page: Any, n: int) -> Any:
    return page.locator("section.cell").nth(n)


def run_and_wait(page: Any, n: int) -> None:
    cell(page, n).locator(".cell-head [data-action=run]").click()
    cell(page, n).locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=60000)
    assert cell(page, n).get_attribute("data-status") == "done", cell(page, n).inner_text()


def test_two_people_share_the_notebooks_session_and_the_owner_shuts_it_down(browser: Any, team: Server) -> None:
    (ada, ada_h), (bob, _) = logged_in(browser, team, "ada"), logged_in(browser, team, "bob")
    try:
        r = ada.request.post(team.url + "/api/notebooks", headers=ada_h, data={
            "name": f"shared {time.monotonic_ns()}", "folder": "/", "cells": [
                {"kind": "mlsql", "source": "select 1 as a, 'x' as b as t;"},
                {"kind": "mlsql", "source": "select a + 41 as answer, b from t as u;"}]})
        assert r.ok, r.text()
        nb = str(r.json()["id"])
        s = ada.request.post(f"{team.url}/api/notebooks/{nb}/shares", headers=ada_h,
                             data={"user": "bob", "role": "editor"})
        assert s.ok, s.text()
        pa, pb = open_as(ada, team, nb), open_as(bob, team, nb)

        run_and_wait(pa, 0)
        run_and_wait(pb, 1)  # bob's cell reads ada's table: one kernel for the notebook
        shown = cell(pb, 1).locator("[data-role=result] td").all_inner_texts()
        assert shown[:2] == ["42", "x"], shown
        for page in (pa, pb):
            cell(page, 1).locator("[data-role=run-by]", has_text="run by bob").wait_for()
        assert cell(pa, 0).locator("[data-role=run-by]").inner_text() == "run by ada"

        running = ada.new_page()
        running.goto(f"{team.url}/running")
        row = running.locator(f"[data-role=session][data-notebook-id='{nb}']")
        row.wait_for()
        assert row.locator("[data-role=session-starter]").inner_text() == "ada"
        assert row.locator("[data-role=session-memory]").inner_text().endswith("B")
        if os.environ.get("UPDATE_SCREENSHOTS") == "1":  # docs/img changes only when asked
            IMG.mkdir(parents=True, exist_ok=True)
            running.screenshot(path=str(IMG / "running-sessions.png"))
        # The page refreshes every 5 s: the row and its button stay the same elements (a rebuilt
        # table took a hover, a selection or a press on "Shut down" away), only the idle time changes.
        row.evaluate("el => { el.dataset.mark = 'kept'; }")
        row.locator("[data-role=session-stop]").evaluate("el => { el.dataset.mark = 'kept'; }")
        idle = f"[data-role=session][data-notebook-id='{nb}'] [data-role=session-idle]"
        before = running.locator(idle).inner_text()
        running.wait_for_function("([sel, before]) => document.querySelector(sel).innerText !== before",
                                  arg=[idle, before], timeout=30000)
        assert row.get_attribute("data-mark") == "kept"
        assert row.locator("[data-role=session-stop]").get_attribute("data-mark") == "kept"
        row.locator("[data-role=session-stop]").click()
        running.locator("[data-role=dialog-ok]").click()
        pb.locator(".banner", has_text="ada shut the session down").wait_for()
        pb.locator("[data-role=kernel][data-status=dead]").wait_for()
        running.locator("[data-role=no-sessions]").wait_for()
        assert not pa.js_errors and not pb.js_errors, pa.js_errors + pb.js_errors
    finally:
        ada.close()
        bob.close()
