"""Find and replace across a notebook's cells (frontend/src/findbar.js, issue 34): Ctrl-H finds in
every cell with a count, case and regex toggles; replace all changes three cells in one step that
a co-editor's page sees and that one undo takes back; Ctrl-F in command mode, replace one; and
the workspace's search by cell text opening the notebook at the matching cell."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from browser_support import Server

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
UPDATE = os.environ.get("UPDATE_SCREENSHOTS") == "1"
SOURCES = ["select 1 as total;", "# Totals\nthe total of totals", "select total from t as total_2;"]
REPLACED = ["select 1 as sum;", "# sums\nthe sum of sums", "select sum from t as sum_2;"]
TEXTS = "() => window.consolePage.order.map((id) => window.consolePage.cells.get(id).source)"


def second_page(browser: Any, server: Server, notebook_id: str) -> tuple[Any, Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    ctx.set_default_timeout(20000)
    pg = ctx.new_page()
    pg.goto(f"{server.url}/notebooks/{notebook_id}")
    pg.wait_for_selector("#app[data-ready='1'][data-connection='live'][data-doc='synced']", state="attached")
    return ctx, pg


def wait_texts(page: Any, want: list[str]) -> None:
    page.wait_for_function(f"(want) => JSON.stringify(({TEXTS})()) === JSON.stringify(want)", arg=want)


def command_mode(page: Any, n: int = 0) -> None:
    page.locator("section.cell").nth(n).focus()
    page.wait_for_function("() => document.activeElement && document.activeElement.matches('section.cell')")


def test_replace_all_across_three_cells_reaches_a_co_editor_and_undoes_in_one_step(
        page: Any, server: Server, open_notebook: Any, browser: Any) -> None:
    nb = server.notebook("find", SOURCES[0], ("markdown", SOURCES[1]), SOURCES[2])
    open_notebook(page, nb["id"])
    page.wait_for_selector("#app[data-doc='synced']", state="attached")
    ctx, other = second_page(browser, server, nb["id"])
    try:
        command_mode(page)
        page.keyboard.press("Control+h")
        bar = page.locator("[data-role=find-bar]")
        assert bar.is_visible() and bar.locator("[data-role=find-replacement]").is_visible()
        page.keyboard.type("total")
        count = bar.locator("[data-role=find-count]")
        assert count.inner_text() == "1 of 6"
        bar.locator("[data-role=find-case]").click()  # "Totals" no longer matches
        assert count.inner_text() == "1 of 5"
        bar.locator("[data-role=find-case]").click()
        bar.locator("[data-role=find-query]").press("Enter")
        bar.locator("[data-role=find-query]").press("Enter")
        # The third match is in the Markdown cell, shown as its source with the match marked.
        assert count.inner_text() == "3 of 6"
        current = page.locator("section.cell").nth(1).locator("[data-role=find-current]")
        assert current.inner_text() == "total"
        assert page.locator("section.cell").nth(1).get_attribute("class").split().count("selected") == 1
        bar.locator("[data-role=find-query]").press("Shift+Enter")
        assert count.inner_text() == "2 of 6"
        assert page.locator(".cm-find-match").count() >= 5
        bar.locator("[data-role=find-replacement]").fill("sum")
        bar.locator("[data-role=replace-all]").click()
        wait_texts(page, REPLACED)
        assert count.inner_text() == "no results"
        assert bar.locator("[data-role=find-said]").inner_text() == "Replaced 6 in 3 cells."
        wait_texts(other, REPLACED)  # through the live document: the co-editor's page has it
        # One undo (Ctrl-Z in command mode) takes back all three cells, here and there.
        page.keyboard.press("Escape")
        assert bar.is_hidden() and page.locator(".cm-find-match").count() == 0
        page.keyboard.press("Control+z")
        wait_texts(page, SOURCES)
        wait_texts(other, SOURCES)
        assert not page.js_errors
    finally:
        ctx.close()


def test_ctrl_f_in_command_mode_replace_one_regex_and_the_help(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("find one", "select a as x;", "select b as y;", "select c as z;")
    open_notebook(page, nb["id"])
    page.wait_for_selector("#app[data-doc='synced']", state="attached")
    # Inside an editor Ctrl-F is not the notebook's: the bar stays shut.
    page.locator("section.cell .cm-content").first.click()
    page.keyboard.press("Control+f")
    bar = page.locator("[data-role=find-bar]")
    assert bar.is_hidden()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+f")
    assert bar.is_visible() and bar.locator("[data-role=find-replacement]").is_hidden()
    page.keyboard.type("as (\\w)")
    bar.locator("[data-role=find-regex]").click()
    assert bar.locator("[data-role=find-count]").inner_text() == "1 of 3"
    bar.locator("[data-role=find-query]").fill("as (")
    assert bar.get_attribute("data-state") == "invalid"
    bar.locator("[data-role=find-query]").fill("as (\\w)")
    bar.locator("[data-role=find-query]").press("Control+h")
    bar.locator("[data-role=find-replacement]").fill("as $1_1")
    bar.locator("[data-role=find-next]").click()  # the second match
    bar.locator("[data-role=replace-one]").click()
    wait_texts(page, ["select a as x;", "select b as y_1;", "select c as z;"])
    assert bar.locator("[data-role=find-count]").inner_text() == "3 of 3"  # on to the next one
    bar.locator("[data-role=find-undo]").click()
    wait_texts(page, ["select a as x;", "select b as y;", "select c as z;"])
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    help_text = page.locator("[data-role=help]").inner_text()
    assert "Ctrl/⌘-f" in help_text and "Ctrl/⌘-h" in help_text and "find and replace in all cells" in help_text
    assert not page.js_errors


def test_the_workspace_finds_cell_text_and_opens_the_notebook_at_the_cell(
        page: Any, server: Server) -> None:
    nb = server.notebook("haystack", "select 1 as a;", "select 2 as needle_column;", folder="/deep/er")
    page.goto(server.url + "/")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    page.locator("[data-role=search]").fill("NEEDLE_col")
    hit = page.locator(f"[data-role=search-cells] li[data-id='{nb['id']}'] [data-role=cell-hit]")
    hit.wait_for()
    assert hit.count() == 1 and "needle_column" in hit.inner_text()
    hit.click()
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    bar = page.locator("[data-role=find-bar]")
    bar.wait_for()
    assert bar.locator("[data-role=find-query]").input_value() == "NEEDLE_col"
    page.locator("section.cell").nth(1).locator("[data-role=find-current]").wait_for()
    assert "selected" in (page.locator("section.cell").nth(1).get_attribute("class") or "")
    assert not page.js_errors


@pytest.mark.skipif(not UPDATE, reason="makes docs/img/find-replace.png; set UPDATE_SCREENSHOTS=1")
def test_screenshot_of_find_and_replace(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("Sales report", ("markdown", "# Sales by region\nTotals per region, from the orders table."),
                         "load parquet.`orders` as orders;\n"
                         "select region, sum(amount) as total from orders group by region as totals;",
                         ("markdown", "## Top regions\nThe regions whose total is above the mean."),
                         "select * from totals where total > (select avg(total) from totals) as top_regions;")
    open_notebook(page, nb["id"])
    page.wait_for_selector("#app[data-doc='synced']", state="attached")
    page.evaluate("() => { for (const c of window.consolePage.cells.values()) c.editor.mount(); }")
    command_mode(page, 1)
    page.keyboard.press("Control+h")
    page.keyboard.type("total")
    bar = page.locator("[data-role=find-bar]")
    bar.locator("[data-role=find-replacement]").fill("revenue")
    bar.locator("[data-role=find-query]").press("Enter")
    page.wait_for_timeout(300)
    page.screenshot(path=str(DOCS_IMG / "find-replace.png"))
    assert (DOCS_IMG / "find-replace.png").stat().st_size > 10_000
