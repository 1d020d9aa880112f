"""The published page (/p/<token>) in Chromium, against the app's read-only view of the same
notebook: the demo notebook after a run is less than 3x the app's height, its Keras-style output
is collapsed the same way (one line per progress bar, not one per redraw), the metrics chart has
axes, the saved result chart is drawn, and the page runs under the app's CSP without errors.

The demo's training cell is first run as a scripted cell that prints what Keras prints (\\r
progress redraws, many batches of them) and reports epoch metrics; then its real source is put
back, so both pages show the demo's sources with that run's stored output. With
UPDATE_SCREENSHOTS=1, docs/img/published.png is taken of the real demo trained on Ray.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from browser_support import REPO, Server

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
UPDATE = os.environ.get("UPDATE_SCREENSHOTS") == "1"

# Three epochs as Keras draws them: a bar redrawn 150 times with \r, then metrics per epoch.
KERAS = """--script
progress 150 every 0.004
progress 150 every 0.004
progress 150 every 0.004
metrics 3 every 0.01 from worker-0, worker-1"""

GROUPED = "select id % 4 as k, count(*) as n from range(100) t(id) group by k order by k as counts;"

# The height of everything the page shows, whichever element scrolls.
HEIGHT = """() => Math.max(document.documentElement.scrollHeight,
    ...[...document.querySelectorAll('[data-role=cells]')].map(e => e.scrollHeight + e.getBoundingClientRect().top))"""


def _wait_run(server: Server, run_id: str) -> dict[str, Any]:
    deadline = time.time() + 90
    while time.time() < deadline:
        run: dict[str, Any] = server.api("GET", f"/runs/{run_id}")
        if run["status"] in ("done", "error", "interrupted", "cancelled"):
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish")


def _published_demo(server: Server) -> tuple[dict[str, Any], str]:
    from console.demo import seed_notebook

    seed = seed_notebook()
    train = next(i for i, c in enumerate(seed["cells"]) if c["kind"] == "python")
    cells = [{"kind": c["kind"], "source": c["source"]} for c in seed["cells"]]
    cells[train] = {"kind": "mlsql", "source": KERAS}
    cells.append({"kind": "mlsql", "source": GROUPED})
    nb = server.api("POST", "/notebooks", {"name": "published demo", "folder": "/", "cells": cells})
    for i in (train, len(cells) - 1):
        run_id = server.api("POST", f"/notebooks/{nb['id']}/run", {"cell_id": nb["cells"][i]["id"]})["run_ids"][0]
        assert _wait_run(server, run_id)["status"] == "done"
    # The demo's own source back in place (the run stays the cell's last one), and the table
    # shown as a bar chart, as the results view saves it.
    now = server.api("GET", f"/notebooks/{nb['id']}")
    back = [{"id": c["id"], "kind": seed["cells"][i]["kind"] if i == train else c["kind"],
             "source": seed["cells"][i]["source"] if i == train else c["source"]} for i, c in enumerate(now["cells"])]
    back[-1]["view"] = {"mode": "chart", "chart": {"type": "bar", "x": "k", "y": ["n"], "agg": "sum", "group": None}}
    nb = server.api("PUT", f"/notebooks/{nb['id']}", {"base_revision": now["revision"], "cells": back})
    token = server.api("POST", f"/notebooks/{nb['id']}/links")["token"]
    return nb, token


def test_the_published_demo_is_as_compact_as_the_app_with_collapsed_keras_output_and_charts_with_axes(
        page: Any, server: Server, open_notebook: Any) -> None:
    nb, token = _published_demo(server)
    train_id = next(c["id"] for c in nb["cells"] if c["kind"] == "python")

    open_notebook(page, nb["id"])
    app_cell = page.locator(f"section.cell[data-cell-id='{train_id}']")
    app_cell.locator("[data-role=chart] canvas").first.wait_for()
    page.wait_for_timeout(300)
    app_height = page.evaluate(HEIGHT)
    app_lines = app_cell.locator("[data-role=log-lines] > *").count()

    published = page.context.new_page()
    errors: list[str] = []
    published.on("pageerror", lambda e: errors.append(str(e)))
    resp = published.goto(f"{server.url}/p/{token}")
    assert resp.status == 200 and "script-src 'self';" in resp.headers["content-security-policy"]
    published.wait_for_selector("#published-app[data-ready='1']", state="attached")
    cell = published.locator(f"section.cell[data-cell-id='{train_id}']")
    chart = cell.locator("[data-role=chart]")
    chart.locator("canvas").first.wait_for()
    published.wait_for_timeout(300)
    pub_height = published.evaluate(HEIGHT)

    # Collapsed: each progress bar is one line ending at 150/150, as in the app.
    lines = cell.locator("[data-role=log-lines] > *")
    texts = lines.all_inner_texts()
    assert len(texts) == app_lines and len(texts) <= 5, texts[:10]
    assert sum("150/150" in t for t in texts) == 3 and not any("\r" in t for t in texts)
    # The metrics chart has axes (uPlot places one element per drawn axis) and a legend.
    assert chart.locator(".u-axis").count() >= 2
    assert "worker-0" in chart.inner_text()
    # The result's saved chart, and the typed table one click away.
    result = published.locator("[data-role=result]").last
    assert result.locator("[data-role=result-chart] canvas").count() >= 1
    result.locator("[data-action=view-table]").click()
    keys = [t for t in result.locator("tbody tr td:first-child").all_inner_texts() if t.strip()]
    assert keys == ["0", "1", "2", "3"], keys
    # The demo's source is shown, not the script that made the output.
    assert "model.fit" in cell.locator("[data-role=source]").inner_text() or "fit(" in cell.inner_text()
    # The plain rendering for pages without scripts stays out of sight.
    assert not published.locator("#published-plain").is_visible()

    ratio = pub_height / app_height
    print(f"published/app height: {pub_height}/{app_height} px = {ratio:.2f}")
    assert ratio < 3, (pub_height, app_height)
    assert not errors and not page.js_errors


def test_the_published_page_asks_nothing_of_the_server(page: Any, server: Server) -> None:
    """It draws from its data island only: no API call, no socket, whoever opens it."""
    nb = server.notebook("quiet", "select 1 as a;")
    run_id = server.api("POST", f"/notebooks/{nb['id']}/run", {"cell_id": nb["cells"][0]["id"]})["run_ids"][0]
    _wait_run(server, run_id)
    token = server.api("POST", f"/notebooks/{nb['id']}/links")["token"]
    asked: list[str] = []
    ctx = page.context.browser.new_context()  # anonymous, under the page's own CSP
    pub = ctx.new_page()
    pub.on("request", lambda r: asked.append(r.url))
    violations: list[str] = []
    pub.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    pub.goto(f"{server.url}/p/{token}")
    pub.wait_for_selector("#published-app[data-ready='1']", state="attached")
    assert pub.locator("[data-role=result] tbody tr").count() == 1
    assert [u for u in asked if "/api/" in u or "socket.io" in u] == []
    assert not violations
    ctx.close()


@pytest.mark.slow
@pytest.mark.skipif(not UPDATE, reason="makes docs/img/published.png of the real demo; set UPDATE_SCREENSHOTS=1")
def test_screenshot_of_the_published_demo_trained_on_ray(page: Any, ray_server: Server) -> None:
    from console.demo import seed_notebook

    # In the lake: kernels run sandboxed with a /tmp of their own.
    data = Path(tempfile.mkdtemp(prefix="mnist-", dir=ray_server.data_dir / "lake"))
    try:
        subprocess.run([sys.executable, "-m", "console", "datasets", "mnist", str(data), "--synthetic",
                        "--rows", "4000", "--partitions", "2"], cwd=REPO, check=True, capture_output=True, timeout=300)
        seed = seed_notebook()
        cells = [{"kind": c["kind"], "source": c["source"].replace("/tmp/mnist", str(data))} for c in seed["cells"]]
        nb = ray_server.api("POST", "/notebooks", {"name": seed["name"], "folder": "/", "cells": cells})
        ray_server.api("POST", f"/notebooks/{nb['id']}/run", {"all": True})
        deadline = time.time() + 900
        while time.time() < deadline:
            runs = ray_server.api("GET", f"/notebooks/{nb['id']}/runs")["runs"]
            if len(runs) == len(cells) and all(r["status"] in ("done", "error") for r in runs.values()):
                break
            time.sleep(1)
        failed = {c: (r["status"], r.get("events", [])[-1:]) for c, r in runs.items() if r["status"] != "done"}
        assert not failed, failed
        token = ray_server.api("POST", f"/notebooks/{nb['id']}/links")["token"]
        page.set_viewport_size({"width": 1280, "height": 1000})
        page.goto(f"{ray_server.url}/p/{token}")
        page.wait_for_selector("#published-app[data-ready='1']", state="attached")
        page.locator("[data-role=chart] canvas").first.wait_for()
        page.wait_for_timeout(500)
        page.screenshot(path=str(DOCS_IMG / "published.png"), full_page=True)
        assert (DOCS_IMG / "published.png").stat().st_size > 10_000
    finally:
        shutil.rmtree(data, ignore_errors=True)
