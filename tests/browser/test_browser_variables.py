"""The variable explorer (issue 34, item 3): after a run the Data panel lists the session's tables
and its Python globals, and a table's Preview opens its rows."""
from __future__ import annotations

from typing import Any

from browser_support import Server, reveal

PY = "--%python\nimport numpy as np\narr = np.zeros((3, 4))\nwho = 'ada'\n"


def test_the_explorer_shows_a_table_and_a_numpy_array_after_a_run(page: Any, server: Server,
                                                                  open_notebook: Any) -> None:
    nb = server.notebook("explorer", "select 1 as a, 'x' as b as t;", ("python", PY))
    open_notebook(page, nb["id"])
    reveal(page, "[data-action=data-panel]").click()
    panel = page.locator("[data-role=data-panel]")
    panel.wait_for()
    cells = page.locator("section.cell")
    for i in (0, 1):
        cells.nth(i).locator(".cell-head [data-action=run]").click()
        cells.nth(i).locator("xpath=self::*[@data-status='done']").wait_for(timeout=60000)
    row = panel.locator("[data-role=data-variables] tr[data-variable=arr]")
    row.wait_for(timeout=20000)  # refreshed when the run ended, no click
    assert row.locator("td").all_inner_texts()[:3] == ["arr", "numpy.ndarray", "3×4"]
    assert panel.locator("tr[data-variable=who] td").nth(3).inner_text() == "'ada'"
    table = panel.locator("[data-role=data-session] [data-session-table=t]")
    assert "1 rows · 2 columns" in table.inner_text()
    table.locator("[data-role=preview]").click()
    page.locator("section.cell").nth(2).locator("[data-role=result]").wait_for(timeout=30000)
    assert not page.js_errors
