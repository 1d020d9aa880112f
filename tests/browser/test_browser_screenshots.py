"""Screenshots for the docs (docs/img/*.png): the seed notebook mid-run on a real Ray head, and
its metrics chart; plus the same views of a scripted run, which only checks that they draw.

docs/img gets pictures of the real demo only: the MNIST tutorial notebook (console/demo) training
TensorFlow on two Ray actors, with synthetic MNIST written to a temporary folder (never
/tmp/mnist, which belongs to whoever runs the demo on this machine). That test runs only with
UPDATE_SCREENSHOTS=1, so a test run leaves the tree clean and does not pay for TensorFlow twice.
The notebook's name is Chinese: without a CJK font (fonts-noto-cjk or fonts-droid-fallback) Chromium
draws it as boxes.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from browser_support import REPO, Server

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
UPDATE = os.environ.get("UPDATE_SCREENSHOTS") == "1"

INTRO = "## MNIST on Ray\n\nLoad the data with MLSQL, train on two Ray actors, watch the log and the metrics live."
SCRIPT = """--script
actors 4 every 0.05 from 2811, 2812
metrics 12 every 0.25 from worker-0, worker-1
progress 80 every 0.08
sleep 30"""

# Mid-run: both Network actors have printed, and the chart holds loss and accuracy of both
# workers over a few of the seed's seven rounds of training.
MID_RUN = """(cellId) => {
    const cell = window.consolePage.cells.get(cellId);
    const sources = [...cell.output.log.model.sources].filter(s => s.startsWith('Network pid='));
    const series = cell.output.chart && cell.output.chart.series;
    const ready = sources.length === 2 && series && series.lines().length >= 4 && series.steps.size >= 4;
    return (cell.status === 'running' && ready) || ['done', 'error', 'interrupted', 'cancelled'].includes(cell.status);
}"""


@pytest.mark.slow
@pytest.mark.skipif(not UPDATE, reason="makes docs/img pictures of the real demo; set UPDATE_SCREENSHOTS=1")
def test_screenshots_of_the_seed_notebook_training_on_ray(page: Any, ray_server: Server) -> None:
    from console.demo import seed_notebook

    data = Path(tempfile.mkdtemp(prefix="mnist-"))  # short: the path shows in the picture
    try:
        subprocess.run([sys.executable, "-m", "console", "datasets", "mnist", str(data), "--synthetic",
                        "--rows", "4000", "--partitions", "2"], cwd=REPO, check=True, capture_output=True, timeout=300)
        seed = seed_notebook()
        cells = [{"kind": c["kind"], "source": c["source"].replace("/tmp/mnist", str(data))} for c in seed["cells"]]
        nb = ray_server.api("POST", "/notebooks", {"name": seed["name"], "folder": "/", "cells": cells})
        page.set_viewport_size({"width": 1280, "height": 1000})
        page.goto(f"{ray_server.url}/notebooks/{nb['id']}")
        page.wait_for_selector("#app[data-ready='1'][data-connection='live']", state="attached")
        # Every editor highlighted, not only those near the viewport (editor.js mounts lazily).
        page.evaluate("() => { for (const c of window.consolePage.cells.values()) c.editor.mount(); }")
        page.click("header [data-action=run-all]")
        train = page.locator("section.cell").nth(2)
        page.wait_for_function(MID_RUN, arg=nb["cells"][2]["id"], timeout=600_000, polling=100)
        assert train.get_attribute("data-status") == "running", page.locator("#app").inner_text()[-3000:]
        # CodeMirror draws only the lines near the viewport, so the viewport is made as tall as the page.
        page.set_viewport_size({"width": 1280, "height": page.evaluate("document.documentElement.scrollHeight")})
        page.wait_for_timeout(300)
        page.screenshot(path=str(DOCS_IMG / "notebook-live.png"))
        train.locator("[data-role=chart]").screenshot(path=str(DOCS_IMG / "metrics-chart.png"))
        train.locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=600_000)
        assert train.get_attribute("data-status") == "done", train.inner_text()[-2000:]
        page.locator("section.cell").nth(3).locator("xpath=self::*[@data-status='done']").wait_for(timeout=120_000)
        assert (DOCS_IMG / "notebook-live.png").stat().st_size > 10_000
        assert not page.js_errors
    finally:
        shutil.rmtree(data, ignore_errors=True)


def test_a_scripted_live_run_and_its_metrics_draw(page: Any, server: Server, open_notebook: Any,
                                                   tmp_path: Path) -> None:
    csv = server.data_dir / "lake" / "digits.csv"  # kernels see the lake, not the host's /tmp
    csv.parent.mkdir(parents=True, exist_ok=True)
    csv.write_text("label,pixels\n" + "".join(f"{i % 10},{i * 37 % 255}\n" for i in range(240)))
    nb = server.notebook("mnist on ray", ("markdown", INTRO),
                         f'load csv.`{csv}` where header="true" as digits;\n'
                         "select label, count(*) as n from digits group by label order by label as per_label;",
                         SCRIPT)
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
    page.wait_for_function("() => document.querySelectorAll('section.cell')[2]"
                           ".querySelector('[data-role=elapsed]').textContent !== ''")
    page.screenshot(path=str(tmp_path / "notebook-live.png"), full_page=True)
    cells.nth(2).locator("[data-role=chart]").screenshot(path=str(tmp_path / "metrics-chart.png"))
    page.click("header [data-action=interrupt]")
    cells.nth(2).locator("xpath=self::*[@data-status='interrupted']").wait_for()
    assert (tmp_path / "notebook-live.png").stat().st_size > 10_000
    assert not page.js_errors
