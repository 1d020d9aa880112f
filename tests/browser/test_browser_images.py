"""A matplotlib figure shown with display(fig) is an image in the page, live and after a reload,
and the cell (no build_result) shows no result table."""
from __future__ import annotations

from typing import Any

from browser_support import Server

FIGURE_CELL = """--%python
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot([1, 2, 3], [1, 4, 9])
print("before the figure", flush=True)
display(fig)
"""


def _image_size(cell: Any) -> list[int]:
    img = cell.locator("[data-role=images] img[data-role=image]")
    img.wait_for()
    cell.page.wait_for_function("() => document.querySelector('img[data-role=image]').complete")
    return img.evaluate("i => [i.naturalWidth, i.naturalHeight]")  # type: ignore[no-any-return]


def test_display_of_a_figure_shows_an_image(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("figure", ("python", FIGURE_CELL))
    open_notebook(page, nb["id"])
    cell = page.locator("section.cell").first
    cell.locator(".cell-head [data-action=run]").click()
    cell.locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=120000)
    assert cell.get_attribute("data-status") == "done", cell.inner_text()
    width, height = _image_size(cell)
    assert width > 100 and height > 50  # a real PNG decoded by the browser, not a broken image
    assert "before the figure" in cell.locator("[data-role=log-lines]").inner_text()
    assert cell.locator("[data-role=result]").count() == 0
    page.reload()
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    assert _image_size(page.locator("section.cell").first) == [width, height]
    assert page.js_errors == []


def test_plt_show_draws_the_figure_without_warnings(page: Any, server: Server, open_notebook: Any) -> None:
    # The sandbox's home is read-only and Agg cannot show: this drew nothing and printed two
    # warnings in red (console/worker/mplinline.py, console/kernel/userdirs.py).
    source = "--%python\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.show()\n"
    nb = server.notebook("plt.show", ("python", source))
    open_notebook(page, nb["id"])
    cell = page.locator("section.cell").first
    cell.locator(".cell-head [data-action=run]").click()
    cell.locator("xpath=self::*[@data-status='done' or @data-status='error']").wait_for(timeout=120000)
    assert cell.get_attribute("data-status") == "done", cell.inner_text()
    width, _ = _image_size(cell)
    assert width > 100
    assert cell.locator(".line.err").count() == 0, cell.locator("[data-role=log-lines]").inner_text()
    assert page.js_errors == []
