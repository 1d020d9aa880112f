"""Completion while typing in Chromium: a column of a table made by an earlier cell, brackets that
close themselves, and a table's schema on hover."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from browser_support import REPO, Server


def cell(page: Any, n: int = 0) -> Any:
    return page.locator("section.cell").nth(n)


def test_complete_a_column_from_an_earlier_cells_table(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("completion", "select 1 as customer_id, 'ada' as customer_name as clients;", "")
    open_notebook(page, nb["id"])
    cell(page, 0).locator(".cell-head [data-action=run]").click()
    cell(page, 0).locator("xpath=self::*[@data-status='done']").wait_for(timeout=60000)

    cell(page, 1).locator(".cm-content").click()
    page.keyboard.type("select customer_n")
    menu = page.locator(".cm-tooltip-autocomplete")
    menu.wait_for()
    options = menu.locator("li .cm-completionLabel").all_inner_texts()
    assert options[0] == "customer_name", options
    assert "clients: string" in menu.inner_text()
    if os.environ.get("CONSOLE_SCREENSHOTS") or not (REPO / "docs" / "img" / "completion.png").exists():
        page.screenshot(path=str(Path(REPO) / "docs" / "img" / "completion.png"),
                        clip={"x": 0, "y": 0, "width": 1000, "height": 420})
    page.wait_for_timeout(200)  # CodeMirror ignores Enter for 75 ms after the menu opens (interactionDelay)
    page.keyboard.press("Enter")
    page.keyboard.type(", upper(")  # the bracket closes itself
    text = cell(page, 1).locator(".cm-content").inner_text()
    assert text == "select customer_name, upper()", text
    page.keyboard.press("End")
    page.keyboard.type(" from clients as t;")

    # Hover over the table name: its schema, from the kernel.
    word = cell(page, 1).locator(".cm-line", has_text="from clients")
    box = word.bounding_box()
    assert box is not None
    offset = text.index("upper()") + len("upper() from cl")  # a character inside "clients"
    page.mouse.move(box["x"] + 4 + offset * 7.8, box["y"] + box["height"] / 2)
    tip = page.locator("[data-role=schema]")
    tip.wait_for(timeout=10000)
    assert "clients: 1 row" in tip.inner_text() and "customer_id  int" in tip.inner_text()  # Spark's type names
    assert page.js_errors == []


def test_without_a_kernel_the_page_offers_mlsql_words(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("completion, no kernel", "")
    open_notebook(page, nb["id"])
    cell(page, 0).locator(".cm-content").click()
    page.keyboard.type("lo")
    page.keyboard.press("Control+Space")
    menu = page.locator(".cm-tooltip-autocomplete")
    menu.wait_for()
    assert "load" in menu.locator("li .cm-completionLabel").all_inner_texts()
