"""The demo notebook run through the browser on this machine shows no red (stderr) lines.

TensorFlow's and Ray's start-up lines (absl notices, the cuInit probe on a machine without a GPU)
are runtime notices on the `system` stream, folded in the page, not errors. The demo runs as
`make run` ships it (console/demo/seed_notebook.json), on a small synthetic MNIST in the lake
instead of /tmp/mnist: only the load path differs.
"""
from __future__ import annotations

from typing import Any

import pytest

from browser_support import Server


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_demo_run_shows_no_red_lines(page: Any, ray_server: Server) -> None:
    from console.demo import seed_notebook
    from console.demo.datasets import write_mnist

    data = ray_server.data_dir / "lake" / "demo_clean_mnist"
    write_mnist(str(data), synthetic=True, rows=3000, partitions=2)
    cells = seed_notebook()["cells"]
    assert cells[0]["source"] == "load parquet.`/tmp/mnist` as mnist;"
    cells[0]["source"] = f"load parquet.`{data}` as mnist;"
    nb = ray_server.notebook("demo, clean", *[(c["kind"], c["source"]) for c in cells])
    page.goto(f"{ray_server.url}/notebooks/{nb['id']}")
    page.wait_for_selector("#app[data-connection='live']", state="attached")
    page.click("[data-action=run-all]")
    last = page.locator("section.cell").nth(len(cells) - 1)
    last.locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=600000)
    statuses = page.locator("section.cell").evaluate_all("els => els.map(e => e.dataset.status)")
    assert statuses == ["done"] * len(cells), page.locator("body").inner_text()[-3000:]
    training = page.locator("section.cell").nth(2)
    for when in ("live", "after a reload"):
        # The check reads a real log: the training cell printed (the driver, then its actors).
        training.locator(".line", has_text="total workers 2").first.wait_for(state="attached")
        red = page.locator(".line.err").all_inner_texts()
        assert red == [], f"{when}: stderr lines in the demo run: {red[:10]}"
        assert page.locator("[data-role=error]").count() == 0
        if when == "live":
            page.reload()
            page.wait_for_selector("#app[data-ready='1']", state="attached")
            page.locator("section.cell .line").first.wait_for(state="attached")
    notices = page.locator("[data-role=system-notices]").evaluate_all("els => els.map(e => e.dataset.count)")
    print("system notice folds (line counts):", notices)
    assert page.js_errors == []
