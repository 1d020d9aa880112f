"""Clear output and clear all stick: after a reload the cleared cells stay empty, the others keep theirs."""
from __future__ import annotations

from typing import Any

from browser_support import Server, reveal


def test_cleared_outputs_stay_cleared_after_a_reload(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("clearing", "--script\nprint 2", "--script\nprint 3", "--script\nprint 4")
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    cells = page.locator("section.cell")
    cells.nth(2).locator("xpath=self::*[@data-status='done']").wait_for(timeout=60000)
    with page.expect_response(lambda r: r.url.endswith("/outputs/clear")) as answer:
        cells.nth(0).locator(".cell-head [data-action=clear-output]").click()
    assert answer.value.status == 200
    assert cells.nth(0).locator(".line").count() == 0
    page.reload()
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    cells.nth(1).locator(".line", has_text="line 3").wait_for()
    assert cells.nth(0).locator(".line").count() == 0
    assert cells.nth(2).locator(".line").count() == 4

    with page.expect_response(lambda r: r.url.endswith("/outputs/clear")) as answer:
        reveal(page, "[data-action=clear-all]").click()  # in the toolbar's More menu
    assert answer.value.status == 200
    page.reload()
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    page.wait_for_selector("#app[data-connection='live']", state="attached")
    assert page.locator("section.cell .line").count() == 0
    assert page.js_errors == []
