"""A Python session in Chromium: a variable of one cell used in the next, the kind that follows
the header, and a restart that asks first and says when it is done."""
from __future__ import annotations

import time
from typing import Any

from browser_support import Server


def cell(page: Any, n: int = 0) -> Any:
    return page.locator("section.cell").nth(n)


def log_text(page: Any, n: int) -> str:
    return " ".join(cell(page, n).locator("[data-role=log-lines] .line").all_inner_texts())


def test_a_python_variable_is_there_in_the_second_cell(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("python session", ("python", "--%python\nanswer_base = 41\n"),
                         ("python", "--%python\nprint('answer', answer_base + 1)\n"))
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    cell(page, 1).locator("xpath=self::*[@data-status='done']").wait_for(timeout=120000)
    assert "answer 42" in log_text(page, 1)
    assert cell(page, 0).get_attribute("data-status") == "done"

    # Restart asks, says what it clears, and says when the new kernel is there.
    page.click(".toolbar [data-action=restart]")
    dialog = page.locator("[data-role=dialog]")
    assert "tables, variables and Python state" in dialog.inner_text()
    page.click("[data-role=dialog-ok]")
    page.locator("[data-banner=restart]", has_text="Kernel restarted").wait_for(timeout=60000)
    cell(page, 1).locator(".cell-head [data-action=run]").click()
    cell(page, 1).locator("xpath=self::*[@data-status='error']").wait_for(timeout=120000)
    assert "NameError" in cell(page, 1).locator("[data-role=error]").inner_text()
    assert page.js_errors == []


def test_the_kind_follows_the_header_as_it_is_typed(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("kind from header", "")
    open_notebook(page, nb["id"])
    cell(page).locator(".cm-content").click()
    page.keyboard.type("--%python")
    select = cell(page).locator("select.kind")
    page.wait_for_function("() => document.querySelector('section.cell select.kind').value === 'python'")
    assert select.input_value() == "python"
    assert cell(page).get_attribute("data-kind") == "python"
    # The live document is stored a moment after the last keystroke.
    deadline = time.time() + 15
    while server.api("GET", f"/notebooks/{nb['id']}")["cells"][0]["kind"] != "python":
        assert time.time() < deadline, "the kind was not stored within 15 s"
        time.sleep(0.2)


def test_active_line_only_in_the_focused_cell(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("active line", "select 1 as a as t;", "select 2 as b as u;")
    open_notebook(page, nb["id"])
    for n in (0, 1):
        cell(page, n).locator(".cm-content").click()
    backgrounds = page.locator(".cm-activeLine").evaluate_all(
        "els => els.map(e => getComputedStyle(e).backgroundColor)")
    shown = [b for b in backgrounds if b not in ("rgba(0, 0, 0, 0)", "transparent")]
    assert len(backgrounds) == 2 and len(shown) == 1, backgrounds
