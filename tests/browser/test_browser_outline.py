"""The outline (frontend/src/outline.js, issue 34): a side panel of the Markdown headings and the
code cells' first lines; a click jumps to the cell, the running cell is marked, and a folded
heading hides the cells under it up to the next heading of the same or a higher level."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from browser_support import Server

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
UPDATE = os.environ.get("UPDATE_SCREENSHOTS") == "1"
CELLS: list[Any] = [("markdown", "# Load\nThe data."), "select 1 as a as t;", ("markdown", "## Clean"),
                    ("python", "--%python\nprint('clean')"), ("markdown", "# Train"), "--script\nsleep 30"]


def rows(page: Any) -> list[tuple[str, str]]:
    return [(r.get_attribute("data-level") or "", r.inner_text().replace("▾", "").replace("▸", "").strip())
            for r in page.locator("[data-role=outline-list] > li").all()]


def shown(page: Any) -> list[bool]:
    return [c.is_visible() for c in page.locator("section.cell").all()]


def test_outline_jumps_marks_the_running_cell_and_folds_a_section(page: Any, server: Server,
                                                                  open_notebook: Any) -> None:
    nb = server.notebook("outline", *CELLS)
    ids = [c["id"] for c in nb["cells"]]
    open_notebook(page, nb["id"])
    page.set_viewport_size({"width": 1280, "height": 500})  # a short window: jumping must scroll
    page.locator("header [data-action=outline]").click()
    outline = page.locator("[data-role=outline]")
    assert outline.is_visible()
    assert rows(page) == [("1", "Load"), ("2", "select 1 as a as t;"), ("2", "Clean"), ("3", "print('clean')"),
                          ("1", "Train"), ("2", "--script")]
    # Jump: the cell is selected and scrolled into view.
    outline.locator("[data-role=outline-item]", has_text="--script").click()
    last = page.locator(f"section.cell[data-cell-id='{ids[5]}']")
    page.wait_for_function("(id) => window.consolePage.selected === id", arg=ids[5])
    assert "selected" in (last.get_attribute("class") or "")
    assert last.evaluate("(el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }")
    # The running cell is marked in the outline.
    page.keyboard.press("Control+Enter")
    page.locator(f"[data-role=outline-list] > li[data-cell-id='{ids[5]}'][data-status=running]").wait_for()
    page.locator("header [data-action=interrupt]").click()
    page.locator(f"[data-role=outline-list] > li[data-cell-id='{ids[5]}']:not([data-status=running])").wait_for()
    # Folding "# Load" hides what is under it up to "# Train" (its "## Clean" section too).
    outline.locator(f"[data-role=outline-fold][data-cell-id='{ids[0]}']").click()
    assert shown(page) == [True, False, False, False, True, True]
    fold = page.locator(f"section.cell[data-cell-id='{ids[0]}'] [data-role=fold]")
    assert fold.inner_text() == "▸ 3 hidden"
    fold.click()  # the heading cell's own button unfolds it
    assert shown(page) == [True] * 6
    # Folding "## Clean" hides only its Python cell; jumping to that cell opens the fold again.
    page.locator(f"section.cell[data-cell-id='{ids[2]}'] [data-role=fold]").click()
    assert shown(page) == [True, True, True, False, True, True]
    outline.locator("[data-role=outline-item]", has_text="print('clean')").click()
    assert shown(page) == [True] * 6
    # The outline follows edits: a new heading typed into a cell shows up.
    page.locator(f"section.cell[data-cell-id='{ids[1]}'] .cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("-- totals\n")
    page.wait_for_function("() => [...document.querySelectorAll('[data-role=outline-item]')]"
                           ".some((b) => b.textContent === '-- totals')")
    assert not page.js_errors


@pytest.mark.skipif(not UPDATE, reason="makes docs/img/outline.png; set UPDATE_SCREENSHOTS=1")
def test_screenshot_of_the_outline(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("Churn model",
                         ("markdown", "# Churn model\nFrom raw events to a trained model."),
                         ("markdown", "## Load the events"), "load parquet.`events` as events;",
                         "select user_id, count(*) as n from events group by user_id as activity;",
                         ("markdown", "## Features"),
                         "--%python\n--%input=activity\nimport numpy as np\nfeatures = ...",
                         ("markdown", "### Checks"), "select count(*) as users from activity as checked;",
                         ("markdown", "# Training"), "--script\nsleep 30",
                         ("markdown", "# Results"), "select * from activity limit 10 as preview;")
    ids = [c["id"] for c in nb["cells"]]
    open_notebook(page, nb["id"])
    page.evaluate("() => { for (const c of window.consolePage.cells.values()) c.editor.mount(); }")
    page.locator("header [data-action=outline]").click()
    page.locator(f"[data-role=outline-fold][data-cell-id='{ids[4]}']").click()  # "## Features" folded
    page.locator(f"section.cell[data-cell-id='{ids[9]}']").focus()
    page.keyboard.press("Control+Enter")
    page.locator(f"[data-role=outline-list] > li[data-cell-id='{ids[9]}'][data-status=running]").wait_for()
    page.wait_for_timeout(400)
    page.screenshot(path=str(DOCS_IMG / "outline.png"))
    page.locator("header [data-action=interrupt]").click()
    assert (DOCS_IMG / "outline.png").stat().st_size > 10_000
