"""A running Ray cell shows its actors on the cell, live, and the Running page lists its session
with memory and actors beside a second session (issue 24 §3).

Real kernels on the test session's Ray head (the dashboard off, as on every head of ours): what
the page shows comes from the cell worker's reads of the GCS (console/worker/ray_usage.py).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from browser_support import Server

IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
SHOOT = os.environ.get("UPDATE_SCREENSHOTS") == "1"  # docs/img changes only when asked

RAY_CELL = """--%python
import time
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote(num_cpus=0.5)
class Holder:
    def hold(self, seconds):
        time.sleep(seconds)
        return seconds

holders = [Holder.remote(), Holder.remote()]
print(ray.get([h.hold.remote(12) for h in holders]))
"""


@pytest.mark.slow
def test_a_running_ray_cell_shows_its_actors_and_the_running_page_lists_them(page: Any, ray_server: Server) -> None:
    plain = ray_server.notebook("no ray here", ("python", "--%python\nprint('plain session')\n"))
    started = ray_server.api("POST", f"/notebooks/{plain['id']}/run", {"all": True})
    nb = ray_server.notebook("two actors", ("python", RAY_CELL))
    page.goto(f"{ray_server.url}/notebooks/{nb['id']}")
    page.wait_for_selector("#app[data-connection='live']", state="attached")
    cell = page.locator("section.cell").first
    cell.locator(".cell-head [data-action=run]").click()

    usage = cell.locator("[data-role=ray-usage][data-running='1']")
    usage.locator("[data-role=ray-usage-summary]", has_text="2 actors alive").wait_for(timeout=240000)
    assert cell.get_attribute("data-status") == "running"
    # The two hold() calls, from the GCS's task events (the dashboard is off), under the sandbox too.
    usage.locator("[data-role=ray-usage-summary]", has_text="2 tasks running").wait_for(timeout=30000)
    summary = usage.locator("[data-role=ray-usage-summary]").inner_text()
    assert "1.0 CPU in use" in summary, summary  # two actors of half a CPU each
    usage.locator("summary").click()  # the list: class, state, node, CPUs
    actors = usage.locator("[data-role=ray-actor][data-state=alive]")
    assert actors.count() == 2, usage.inner_text()
    assert all(t.startswith("Holder — alive on ") and t.endswith("0.5 CPUs") for t in actors.all_inner_texts()), \
        actors.all_inner_texts()
    assert "null" not in usage.inner_text(), usage.inner_text()
    if SHOOT:
        cell.screenshot(path=str(IMG / "ray-usage-cell.png"))

    running = page.context.new_page()
    running.goto(f"{ray_server.url}/running")
    ray_row = running.locator(f"[data-role=session][data-notebook-id='{nb['id']}']")
    plain_row = running.locator(f"[data-role=session][data-notebook-id='{plain['id']}']")
    ray_row.wait_for()
    plain_row.wait_for()
    assert started["run_ids"]
    for row in (ray_row, plain_row):
        assert row.locator("[data-role=session-memory]").inner_text().endswith("B"), row.inner_text()
    ray_row.locator("[data-role=session-ray]", has_text="2 actors").wait_for(timeout=30000)
    assert "1.0 CPU" in ray_row.locator("[data-role=session-ray]").inner_text()
    assert "2 tasks running" in ray_row.locator("[data-role=session-ray]").inner_text()
    assert plain_row.locator("[data-role=session-ray]").inner_text() == "—"
    if SHOOT:
        running.screenshot(path=str(IMG / "running-sessions-ray.png"))
    running.close()

    cell.locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=240000)
    assert cell.get_attribute("data-status") == "done", cell.inner_text()
    # The last report stays on the cell, as its state when it ended.
    cell.locator("[data-role=ray-usage][data-running='0']", has_text="when the cell ended").wait_for()
    assert not page.js_errors, page.js_errors
