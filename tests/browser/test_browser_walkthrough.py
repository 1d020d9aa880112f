"""The walkthrough's sharp edges (issue 30, item 6) in Chromium: Run all after a failure, one
attribution on a job's cell, the parameter form and the toolbar's Run all, the data panel beside
the notebook at 1000 px, every listed file's schema, one type vocabulary, and the job history."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from browser_support import Server

SCRIPT = "--script\n"
IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
SHOTS = pytest.mark.skipif(os.environ.get("UPDATE_SCREENSHOTS") != "1",
                           reason="writes docs/img; set UPDATE_SCREENSHOTS=1")


def cell(page: Any, n: int = 0) -> Any:
    return page.locator("section.cell").nth(n)


def wait_status(page: Any, status: str, n: int = 0, timeout: float = 60000) -> None:
    cell(page, n).locator(f"xpath=self::*[@data-status='{status}']").wait_for(timeout=timeout)


def stopped_notebook(server: Server) -> dict[str, Any]:
    return server.notebook("stops quietly", SCRIPT + "print 1", "select * from no_such_table as t;",
                           SCRIPT + "print 3", "select 4 as four as t4;")


def assert_stopped_quietly(page: Any) -> None:
    for n in (2, 3):
        wait_status(page, "cancelled", n)
        c = cell(page, n)
        assert c.locator("[data-role=error]").count() == 0, c.inner_text()  # no red error card
        c.locator("[data-role=not-run]").wait_for()
        assert c.locator("[data-role=status]").inner_text() == "not run"
        assert "not-run" in (c.get_attribute("class") or "")
    assert cell(page, 1).locator("[data-role=error]").count() == 1  # the failure itself stays loud
    banner = page.locator("[data-banner=run-all]")
    assert banner.count() == 1
    text = banner.inner_text()
    assert "Run all stopped at cell 2" in text and "SQL error" in text and "no_such_table" in text, text
    assert "2 cells after it did not run" in text, text


def test_run_all_after_a_failure_shows_the_rest_as_not_run_under_one_banner(
        page: Any, server: Server, open_notebook: Any) -> None:
    nb = stopped_notebook(server)
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    wait_status(page, "error", 1)
    page.locator("[data-banner=run-all]").wait_for()
    assert_stopped_quietly(page)
    # A reload draws the stored runs the same way.
    open_notebook(page, nb["id"])
    page.locator("[data-banner=run-all]").wait_for()
    assert_stopped_quietly(page)
    assert not page.js_errors


@SHOTS
def test_screenshot_of_run_all_stopped(page: Any, server: Server, open_notebook: Any) -> None:
    nb = stopped_notebook(server)
    page.set_viewport_size({"width": 1200, "height": 760})
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    wait_status(page, "cancelled", 3)
    page.locator("[data-banner=run-all]").wait_for()
    page.screenshot(path=str(IMG / "run-all-stopped.png"))
