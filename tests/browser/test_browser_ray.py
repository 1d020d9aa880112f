"""A real Python cell on Ray in the browser: two actors print, and both sources appear live."""
from __future__ import annotations

from typing import Any

import pytest

from browser_support import Server

ACTORS_CELL = """--%python
import time
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Trainer:
    def work(self, name, n):
        for i in range(1, n + 1):
            print(f"{name} step {i}", flush=True)
            time.sleep(0.3)
        return n

actors = [Trainer.remote(), Trainer.remote()]
print(ray.get([a.work.remote(name, 12) for a, name in zip(actors, ["A", "B"])]))
"""


@pytest.mark.slow
def test_python_cell_prints_from_two_ray_actors_live(page: Any, ray_server: Server) -> None:
    nb = ray_server.notebook("ray actors", ("python", ACTORS_CELL))
    page.goto(f"{ray_server.url}/notebooks/{nb['id']}")
    page.wait_for_selector("#app[data-connection='live']", state="attached")
    cell = page.locator("section.cell").first
    cell.locator(".cm-annotation").first.wait_for()  # the --%python header is marked
    assert cell.locator(".cm-annotation").count() == 1
    cell.locator(".cell-head [data-action=run]").click()
    # Lines of both actors, tagged with different sources, while the cell still runs.
    page.wait_for_function("""() => {
        const c = document.querySelector('section.cell');
        const lines = [...c.querySelectorAll('.line')];
        const a = lines.find(l => l.lastChild.data.startsWith('A step'));
        const b = lines.find(l => l.lastChild.data.startsWith('B step'));
        return c.dataset.status === 'running' && a && b && a.dataset.source !== b.dataset.source
            && a.dataset.source !== 'driver';
    }""", timeout=240000)
    cell.locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=240000)
    assert cell.get_attribute("data-status") == "done", cell.inner_text()
    texts = cell.locator(".line").evaluate_all("els => els.map(e => e.lastChild.data)")
    for name in "AB":
        assert [t for t in texts if t.startswith(f"{name} step")] == [f"{name} step {i}" for i in range(1, 13)]
    assert "[12, 12]" in texts
    assert len(cell.locator("[data-role=log-filter] option").all_inner_texts()) >= 3  # all + two actors
