"""Runtime notices fold into one "system notices (N)" line; real stderr stays red; a Python cell
that builds no result shows its output only, no empty table; live and after a reload alike."""
from __future__ import annotations

from typing import Any

from browser_support import Server

# Three start-up lines as TensorFlow's C++ logging writes them to stderr (classified as `system`
# by console/actors/capture.py), the cell's own line, then a line that is a real error.
NOTICES_CELL = """--%python
import sys
for n in range(3):
    sys.stderr.write(f"I0000 00:00:1700000000.00000{n}   4242 cpu_feature_guard.cc:210] notice {n}\\n")
sys.stderr.flush()
print("the cell's own line", flush=True)
sys.stderr.write("a real problem\\n")
"""


def _check(cell: Any) -> None:
    fold = cell.locator("[data-role=system-notices]")
    assert fold.count() == 1
    assert fold.get_attribute("data-count") == "3"
    summary = fold.locator("[data-action=toggle-notices]")
    assert summary.inner_text() == "▸ system notices (3)"
    assert not fold.locator(".line").first.is_visible()  # folded
    assert cell.locator(".line.err").all_inner_texts() == ["a real problem"]
    assert "the cell's own line" in cell.locator("[data-role=log-lines]").inner_text()
    assert cell.locator("[data-role=result]").count() == 0  # no empty `value` table with a random name
    summary.click()
    assert [t.strip() for t in fold.locator(".line").all_inner_texts()] == [
        f"I0000 00:00:1700000000.00000{n}   4242 cpu_feature_guard.cc:210] notice {n}" for n in range(3)]
    assert fold.locator(".line.err").count() == 0
    assert summary.inner_text() == "▾ system notices (3)"


def test_notices_fold_stderr_stays_red_and_no_empty_table(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("notices", ("python", NOTICES_CELL))
    open_notebook(page, nb["id"])
    cell = page.locator("section.cell").first
    cell.locator(".cell-head [data-action=run]").click()
    cell.locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=120000)
    assert cell.get_attribute("data-status") == "done", cell.inner_text()
    page.wait_for_function("() => document.querySelector('section.cell .line.err')")
    _check(cell)
    page.reload()  # the stored run draws the same
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    cell.locator("[data-role=system-notices]").wait_for(state="attached")
    _check(cell)
    assert page.js_errors == []


def test_a_cell_that_ended_shows_its_last_line_with_its_status(page: Any, server: Server, open_notebook: Any) -> None:
    """The log is drawn at the next animation frame; an ended status is shown at once. With no frame
    to come (frames stopped below, as a loaded machine delays them), the end still draws the log:
    the cell never says "done" without its output (a CI run read a done cell missing its last line)."""
    nb = server.notebook("last line", ("python", "--%python\nprint('the last line', flush=True)\n"))
    open_notebook(page, nb["id"])
    cell = page.locator("section.cell").first
    page.evaluate("() => { window.requestAnimationFrame = () => 1; }")  # no frame comes from here on
    cell.locator(".cell-head [data-action=run]").click()
    cell.locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=120000)
    assert cell.get_attribute("data-status") == "done", cell.inner_text()
    assert cell.locator("[data-role=log-lines]").inner_text().strip() == "the last line"
    assert page.js_errors == []
