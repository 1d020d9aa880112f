"""The tab says when a run ends (issue 34): the title and favicon show running, done or failed."""
from __future__ import annotations

from typing import Any

from browser_support import Server


def test_the_title_says_running_then_done_then_failed(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("signal", "select 1 as a as t;", "select * from no_such_table as u;")
    open_notebook(page, nb["id"])
    assert page.title() == "signal · MLSQL Console"
    cells = page.locator("section.cell")
    cells.nth(0).locator(".cell-head [data-action=run]").click()
    cells.nth(0).locator("xpath=self::*[@data-status='done']").wait_for()
    page.wait_for_function("() => document.title.startsWith('✓ ')")
    assert page.title() == "✓ signal · MLSQL Console"
    icon = page.locator("link[rel=icon]").get_attribute("href") or ""
    assert icon.startswith("data:image/svg+xml,") and "16a34a" in icon  # green
    cells.nth(1).locator(".cell-head [data-action=run]").click()
    cells.nth(1).locator("xpath=self::*[@data-status='error']").wait_for()
    page.wait_for_function("() => document.title.startsWith('✗ ')")
    assert "dc2626" in (page.locator("link[rel=icon]").get_attribute("href") or "")  # red
    assert not page.js_errors
