"""The dashboard in Chromium against a real server: a cell's result drawn as a chart is pinned from
the notebook page, the dashboard at /d/<id> shows it with the notebook's parameter and Refresh,
a tile is made wider, and a job run of the notebook with another parameter value updates the tile
(issue 34 item 5: "a dashboard with a chart refreshed by a job run")."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from browser_support import Server, reveal

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
UPDATE = os.environ.get("UPDATE_SCREENSHOTS") == "1"

PARAM = 'set n = "3" where type="defaultParam";'
TOTALS = ("select concat('group ', cast(id % 3 as varchar)) as k, sum(id) * ${n} as total "
          "from range(30) t(id) group by k order by k as totals;")


def _tile_values(tile: Any) -> list[str]:
    """The chart tile's rows as its (hidden) table holds them: what the chart is drawn from."""
    return [t.strip() for t in tile.locator("[data-role=result] tbody td").all_text_contents()]


def test_a_pinned_chart_is_refreshed_by_a_job_run(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("sales dashboard", PARAM, TOTALS)
    nb_id, cell = nb["id"], nb["cells"][1]["id"]
    open_notebook(page, nb_id)
    page.click("[data-role='params-run']")  # Run all with the default n = 3
    second = page.locator("section.cell").nth(1)
    second.locator("xpath=self::*[@data-status='done']").wait_for(timeout=90000)
    result = second.locator("[data-role=result]")
    result.locator("[data-action=view-chart]").click()
    chart = result.locator("[data-role=result-chart]")
    chart.wait_for()
    chart.locator("[data-role=chart-type]").select_option("bar")
    result.locator("[data-action=pin]").click()
    result.locator("[data-action=pin][data-pinned='1']").wait_for()
    pinned = server.api("GET", f"/notebooks/{nb_id}/dashboard")
    assert [(t["cell_id"], t["kind"]) for t in pinned["tiles"]] == [(cell, "chart")], pinned

    # The toolbar's Dashboard link leads to the page: the tile draws the cell's chart of its latest run.
    reveal(page, "[data-role=dashboard-link]").click()
    page.wait_for_url(f"**/d/{nb_id}")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    assert page.inner_text("[data-role=dashboard-name]") == "sales dashboard"
    tile = page.locator(f"[data-role=tile][data-cell-id='{cell}'][data-kind=chart]")
    tile.locator("[data-role=result-chart][data-type=bar][data-points='3']").wait_for()
    assert _tile_values(tile) == ["group 0", "405", "group 1", "435", "group 2", "465"]
    assert page.locator("[data-role=dashboard-param][data-param=n]").get_attribute("placeholder") == "3"

    # An editor arranges: wider is stored with the dashboard.
    tile.locator("[data-action=tile-wider]").click()
    page.wait_for_selector(f"[data-role=tile][data-cell-id='{cell}'][data-width='3']")
    deadline = time.monotonic() + 10
    while server.api("GET", f"/notebooks/{nb_id}/dashboard")["tiles"][0]["width"] != 3:
        assert time.monotonic() < deadline, "the new width was never stored"
        time.sleep(0.2)

    # The notebook's job runs with n = 10 (fired now rather than at 02:00): the open dashboard's
    # tile shows the new values once the run ends, without a reload.
    job = server.api("POST", "/jobs", {"notebook_id": nb_id, "name": "dashboard refresh", "cron": "0 2 * * *",
                                       "params": {"n": "10"}})
    server.api("POST", f"/jobs/{job['id']}/run", {})
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-role=tile] [data-role=result] tbody td')]"
        ".some((td) => td.textContent.trim() === '1550')", timeout=90000)
    assert _tile_values(tile) == ["group 0", "1350", "group 1", "1450", "group 2", "1550"]
    tile.locator("[data-role=result-chart][data-type=bar][data-points='3']").wait_for()

    # Refresh with a typed value: Run all with it, through the run endpoint.
    page.fill("[data-role=dashboard-param][data-param=n]", "1")
    page.click("[data-role=dashboard-refresh]")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-role=tile] [data-role=result] tbody td')]"
        ".some((td) => td.textContent.trim() === '155')", timeout=90000)
    assert _tile_values(tile) == ["group 0", "135", "group 1", "145", "group 2", "155"]
    if UPDATE:  # docs/img/dashboard.png, the README's picture of a dashboard (UPDATE_SCREENSHOTS=1 only)
        server.api("POST", f"/notebooks/{nb_id}/dashboard/tiles", {"cell_id": cell, "kind": "result", "width": 1})
        page.locator("[data-role=tile][data-kind=result] [data-role=result]").wait_for()
        page.wait_for_timeout(500)
        page.screenshot(path=str(DOCS_IMG / "dashboard.png"))
    assert page.js_errors == []

    # Through a read-only link: the same tile, drawn by the published page's bundle; nothing to run or move.
    link = server.api("POST", f"/notebooks/{nb_id}/links")
    page.goto(f"{server.url}/p/{link['token']}/dashboard")
    page.wait_for_selector("#dashboard-app[data-ready='1']", state="attached")
    shared = page.locator("[data-role=tile][data-kind=chart][data-width='3']")
    shared.locator("[data-role=result-chart][data-type=bar][data-points='3']").wait_for()
    assert _tile_values(shared) == ["group 0", "135", "group 1", "145", "group 2", "155"]
    assert page.locator("[data-role=dashboard-refresh], [data-action=tile-wider]").count() == 0
    assert page.js_errors == []
