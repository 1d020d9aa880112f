"""Results in Chromium: a chart saved with the cell and drawn again after a reload, sorting and
paging the WHOLE result on the server, downloading it, and values shown readably."""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

from browser_support import Server

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"

GROUPED = "select id % 5 as k, count(*) as n, sum(id) as total from range(1000) t(id) group by k order by k as counts;"
BIG = "select id, 10000 - id as rev from range(10000) t(id) as big;"


def _run_first_cell(page: Any) -> Any:
    cell = page.locator("section.cell").first
    cell.locator(".cell-head [data-action=run]").click()
    cell.locator("xpath=self::*[@data-status='done']").wait_for(timeout=60000)
    result = cell.locator("[data-role=result]")
    result.wait_for()
    return result


def _first_cells(result: Any) -> list[str]:
    return result.locator("tbody tr").first.locator("td").all_inner_texts()


def test_bar_chart_of_a_group_by_is_saved_and_drawn_again_after_reload(page: Any, server: Server,
                                                                       open_notebook: Any) -> None:
    nb = server.notebook("chart me", GROUPED)
    open_notebook(page, nb["id"])
    result = _run_first_cell(page)
    result.locator("[data-action=view-chart]").click()
    chart = result.locator("[data-role=result-chart]")
    chart.wait_for()
    # The first click already draws something: x is the key, y the numbers.
    assert chart.locator("[data-role=chart-x]").input_value() == "k"
    assert chart.get_attribute("data-series") == "n|total"
    chart.locator("[data-role=chart-type]").select_option("bar")
    chart.locator("[data-role=chart-y] input[value=total]").uncheck()
    page.wait_for_function("() => document.querySelector('[data-role=save-state]').textContent === 'saved'"
                           " && document.querySelector('[data-role=result-chart]').dataset.series === 'n'")
    page.wait_for_function(f"""async () => {{
        const r = await fetch('/api/notebooks/{nb["id"]}');
        const nb = await r.json();
        const v = nb.cells[0].view;
        return v && v.chart.type === 'bar' && v.chart.y.join('|') === 'n';
    }}""")
    saved = server.api("GET", f"/notebooks/{nb['id']}")["cells"][0]["view"]
    assert saved == {"mode": "chart", "chart": {"type": "bar", "x": "k", "y": ["n"], "agg": "sum", "group": None}}
    assert chart.get_attribute("data-points") == "5"
    assert chart.locator("canvas").count() >= 1

    page.reload()
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    result = page.locator("section.cell").first.locator("[data-role=result]")
    result.wait_for()
    assert result.get_attribute("data-mode") == "chart"
    chart = result.locator("[data-role=result-chart]")
    chart.wait_for()
    assert chart.get_attribute("data-type") == "bar" and chart.get_attribute("data-series") == "n"
    page.wait_for_function("() => document.querySelector('[data-role=result-chart]').dataset.points === '5'")
    assert chart.locator("[data-role=chart-type]").input_value() == "bar"
    assert chart.locator("canvas").count() >= 1
    assert not page.js_errors
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":  # the README's picture of the chart view
        page.locator("section.cell").first.screenshot(path=str(DOCS_IMG / "result-chart.png"))


def test_sort_page_to_row_5000_and_download_the_whole_result(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("ten thousand", BIG)
    open_notebook(page, nb["id"])
    result = _run_first_cell(page)
    assert result.get_attribute("data-total-rows") == "10000"
    # A click on a header sorts the whole result (rev ascending: the last id first), not the page.
    result.locator("th[data-column=rev]").click()
    page.wait_for_function("() => document.querySelector('[data-role=result]').dataset.sort === 'rev asc'"
                           " && !document.querySelector('[data-role=result]').dataset.loading")
    assert _first_cells(result) == ["9,999", "1"] or _first_cells(result) == ["9999", "1"]
    result.locator("th[data-column=rev]").click()
    page.wait_for_function("() => document.querySelector('[data-role=result]').dataset.sort === 'rev desc'"
                           " && !document.querySelector('[data-role=result]').dataset.loading")
    assert _first_cells(result) == ["0", "10000"]
    result.locator("th[data-column=rev]").click()  # a third click: back to the kernel's order
    page.wait_for_function("() => document.querySelector('[data-role=result]').dataset.sort === ''")

    row = result.locator("[data-role=row-input]")
    row.fill("5000")
    row.press("Enter")
    page.wait_for_function("() => document.querySelector('[data-role=result]').dataset.offset === '4999'"
                           " && !document.querySelector('[data-role=result]').dataset.loading")
    first = result.locator("tbody tr").first
    assert first.get_attribute("data-row") == "5000" and _first_cells(result) == ["4999", "5001"]
    assert "rows 5,000–5,019 of 10,000" in result.locator("[data-role=table-info]").inner_text()
    result.locator("[data-action=page-next]").click()
    page.wait_for_function("() => document.querySelector('[data-role=result]').dataset.offset === '5019'")
    assert _first_cells(result)[0] == "5019"

    # Sorted descending by id, the download is the whole result in the order shown.
    result.locator("th[data-column=id]").click()
    result.locator("th[data-column=id]").click()
    page.wait_for_function("() => document.querySelector('[data-role=result]').dataset.sort === 'id desc'")
    with page.expect_download() as info:
        result.locator("[data-action=download-csv]").click()
    download = info.value
    assert download.suggested_filename == "big.csv"
    rows = list(csv.reader(io.StringIO(open(download.path(), encoding="utf-8").read())))
    assert rows[0] == ["id", "rev"] and len(rows) == 10001
    assert rows[1:] == [[str(i), str(10000 - i)] for i in range(9999, -1, -1)]
    assert not page.js_errors


def test_values_show_readably(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("values", "select 9007199254740993::bigint as big, null as nothing, date '2024-01-02' as d, "
                                   "[1, 2] as l, 'ab'::blob as b, 'NaN'::double as nan as v;")
    open_notebook(page, nb["id"])
    result = _run_first_cell(page)
    assert _first_cells(result) == ["9007199254740993", "null", "2024-01-02", "[1,2]", "0x6162 (2 bytes)", "NaN"]
    classes = result.locator("tbody td").evaluate_all("tds => tds.map(td => td.className)")
    assert classes[0] == "num" and classes[1] == "null" and classes[4] == "binary"
    assert not page.js_errors
