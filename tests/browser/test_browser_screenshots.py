"""Screenshots for the docs: the notebook mid-run and a metrics chart (docs/img/*.png).

The live cell is a scripted one (browser_engine.py) so the picture is the same on every run:
two actors printing, a progress bar redrawing in place, per-worker loss and accuracy.
The pictures go to docs/img only with UPDATE_SCREENSHOTS=1 (so a test run leaves the tree
clean); otherwise to the test's temporary folder.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from conftest import Server

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"

INTRO = "## MNIST on Ray\n\nLoad the data with MLSQL, train on two Ray actors, watch the log and the metrics live."
SCRIPT = """--script
actors 4 every 0.05 from 2811, 2812
metrics 12 every 0.25 from worker-0, worker-1
progress 80 every 0.08
sleep 30"""


def test_screenshots_of_a_live_run_and_its_metrics(page: Any, server: Server, open_notebook: Any, tmp_path: Path) -> None:
    csv = Path("/tmp/console-screens/digits.csv")  # a short path reads better in the picture
    csv.parent.mkdir(exist_ok=True)
    csv.write_text("label,pixels\n" + "".join(f"{i % 10},{i * 37 % 255}\n" for i in range(240)))
    nb = server.notebook("mnist on ray", ("markdown", INTRO),
                         f'load csv.`{csv}` where header="true" as digits;\n'
                         "select label, count(*) as n from digits group by label order by label as per_label;",
                         SCRIPT)
    IMG = DOCS_IMG if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    IMG.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 1000})
    open_notebook(page, nb["id"])
    cells = page.locator("section.cell")
    cells.nth(1).locator(".cell-head [data-action=run]").click()
    cells.nth(1).locator("[data-role=result]").wait_for()
    cells.nth(2).locator(".cell-head [data-action=run]").click()
    # Mid-run: both actors have printed, the chart has points, the bar is part-way.
    page.wait_for_function("""() => {
        const log = document.querySelectorAll('section.cell')[2].querySelectorAll('.line');
        return [...log].some(l => /^\\d+\\/80 \\[/.test(l.lastChild.data) && parseInt(l.lastChild.data) > 25);
    }""", timeout=30000)
    page.wait_for_function("document.querySelectorAll('section.cell')[2].querySelector('[data-role=elapsed]').textContent !== ''")
    page.screenshot(path=str(IMG / "notebook-live.png"), full_page=True)
    cells.nth(2).locator("[data-role=chart]").screenshot(path=str(IMG / "metrics-chart.png"))
    page.click("header [data-action=interrupt]")
    cells.nth(2).locator("xpath=self::*[@data-status='interrupted']").wait_for()
    assert (IMG / "notebook-live.png").stat().st_size > 10_000
    assert not page.js_errors
