"""The walkthrough's sharp edges (issue 30, item 6) in Chromium: Run all after a failure, one
attribution on a job's cell, the parameter form and the toolbar's Run all, the data panel beside
the notebook at 1000 px, every listed file's schema, one type vocabulary, and the job history."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from browser_support import Server

SCRIPT = "--script\n"
IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
SHOTS = pytest.mark.skipif(os.environ.get("UPDATE_SCREENSHOTS") != "1",
                           reason="writes docs/img; set UPDATE_SCREENSHOTS=1")


def cell(page: Any, n: int = 0) -> Any:
    return page.locator("section.cell").nth(n)


def wait_status(page: Any, status: str, n: int = 0, timeout: float = 60000) -> None:
    cell(page, n).locator(f"xpath=self::*[@data-status='{status}']").wait_for(timeout=timeout)


def stopped_notebook(server: Server) -> dict[str, Any]:
    return server.notebook("stops quietly", SCRIPT + "print 1", "select * from no_such_table as t;",
                           SCRIPT + "print 3", "select 4 as four as t4;")


def assert_stopped_quietly(page: Any) -> None:
    for n in (2, 3):
        wait_status(page, "cancelled", n)
        c = cell(page, n)
        assert c.locator("[data-role=error]").count() == 0, c.inner_text()  # no red error card
        c.locator("[data-role=not-run]").wait_for()
        assert c.locator("[data-role=status]").inner_text() == "not run"
        assert "not-run" in (c.get_attribute("class") or "")
    assert cell(page, 1).locator("[data-role=error]").count() == 1  # the failure itself stays loud
    banner = page.locator("[data-banner=run-all]")
    assert banner.count() == 1
    text = banner.inner_text()
    assert "Run all stopped at cell 2" in text and "SQL error" in text and "no_such_table" in text, text
    assert "2 cells after it did not run" in text, text


def test_run_all_after_a_failure_shows_the_rest_as_not_run_under_one_banner(
        page: Any, server: Server, open_notebook: Any) -> None:
    nb = stopped_notebook(server)
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    wait_status(page, "error", 1)
    page.locator("[data-banner=run-all]").wait_for()
    assert_stopped_quietly(page)
    # A reload draws the stored runs the same way.
    open_notebook(page, nb["id"])
    page.locator("[data-banner=run-all]").wait_for()
    assert_stopped_quietly(page)
    assert not page.js_errors


@SHOTS
def test_screenshot_of_run_all_stopped(page: Any, server: Server, open_notebook: Any) -> None:
    nb = stopped_notebook(server)
    page.set_viewport_size({"width": 1200, "height": 760})
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    wait_status(page, "cancelled", 3)
    page.locator("[data-banner=run-all]").wait_for()
    page.screenshot(path=str(IMG / "run-all-stopped.png"))


def run_job(server: Server, notebook_id: str, name: str, params: dict[str, str] | None = None) -> dict[str, Any]:
    """A job on the notebook, run now; its finished run."""
    body: dict[str, Any] = {"notebook_id": notebook_id, "name": name, "cron": "0 2 * * *"}
    if params:
        body["params"] = params
    job = server.api("POST", "/jobs", body)
    server.api("POST", f"/jobs/{job['id']}/run", {})
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        runs = server.api("GET", f"/jobs/{job['id']}/runs")["runs"]
        if runs and runs[0]["status"] not in ("queued", "running"):
            return {"job": job, "run": runs[0]}
        time.sleep(0.3)
    raise AssertionError(f"the job {name} did not end: {runs}")


def test_a_cell_a_job_ran_says_so_once_in_its_header(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("job attribution", "select 1 as one as t1;", "select 2 as two as t2;")
    assert run_job(server, nb["id"], "nightly-once")["run"]["status"] == "done"
    open_notebook(page, nb["id"])
    page.locator("[data-role=run-by-job]").nth(1).wait_for()
    for n in (0, 1):
        c = cell(page, n)
        assert c.inner_text().count("run by") == 1, c.inner_text()
        assert c.locator(".cell-head [data-role=run-by-job]").inner_text() == "run by job nightly-once"
    # A person's run of the cell takes the attribution back.
    cell(page, 0).locator(".cell-head [data-action=run]").click()
    cell(page, 0).locator("[data-role=run-by]", has_text="run by Local admin").wait_for()
    assert cell(page, 0).locator("[data-role=run-by-job]").count() == 0
    assert cell(page, 0).inner_text().count("run by") == 1
    assert not page.js_errors


PARAMS_NB = ('set day = "x" where type="defaultParam";', "select concat('day=', '${day}') as d as t;")


def last_run(server: Server, notebook_id: str, n: int) -> dict[str, Any]:
    nb = server.api("GET", f"/notebooks/{notebook_id}")
    return server.api("GET", f"/notebooks/{notebook_id}/runs")["runs"].get(nb["cells"][n]["id"]) or {}


def rerun_and_read(page: Any, server: Server, notebook_id: str, click: Any) -> str:
    """Click, wait for a new run of cell 2 to end on the page; the page's text of its result."""
    before = last_run(server, notebook_id, 1).get("id")
    click()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run = last_run(server, notebook_id, 1)
        if run.get("id") != before and run.get("status") in ("done", "error"):
            break
        time.sleep(0.2)
    page.wait_for_function("() => { const c = document.querySelectorAll('section.cell')[1];"
                           " return c.dataset.status === 'done' && !c.querySelector('[data-role=output].stale'); }")
    cell(page, 1).locator("[data-role=result] tbody td").first.wait_for()
    return cell(page, 1).locator("[data-role=result] tbody").inner_text()


def test_the_toolbar_run_all_uses_the_parameter_forms_values(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("params and run all", *PARAMS_NB)
    open_notebook(page, nb["id"])
    page.fill("[data-role='param-input'][data-param='day']", "typed-value")
    read = lambda click: rerun_and_read(page, server, nb["id"], click)  # noqa: E731
    assert "day=typed-value" in read(lambda: page.click("[data-role='params-run']"))
    # The toolbar's Run all, and a cell's own Run, run what the form shows, not the default.
    assert "day=typed-value" in read(lambda: page.click("[data-action=run-all]"))
    cell(page, 0).locator(".cell-head [data-action=run]").click()
    wait_status(page, "done", 0)
    assert "day=typed-value" in read(lambda: cell(page, 1).locator(".cell-head [data-action=run]").click())
    page.fill("[data-role='param-input'][data-param='day']", "other")
    assert "day=other" in read(lambda: page.click("[data-action=run-all]"))
    # An empty field is the default.
    page.fill("[data-role='param-input'][data-param='day']", "")
    assert "day=x" in read(lambda: page.click("[data-action=run-all]"))
    assert not page.js_errors


def uncovered(page: Any, locator: Any) -> bool:
    """Whether the element is what the page has at its centre (nothing lies over it)."""
    return locator.evaluate("(el) => { const r = el.getBoundingClientRect();"
                            " const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
                            " return !!top && (top === el || el.contains(top)); }")


LONG = "select '" + "wide " * 60 + "end' as long_text, 1 as n as wide;"


def open_beside_the_panel(page: Any, server: Server, open_notebook: Any) -> Any:
    nb = server.notebook("data panel beside", LONG, "select 2 as two as t2;")
    page.set_viewport_size({"width": 1000, "height": 760})
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    wait_status(page, "done", 1)
    page.click("[data-action=data-panel]")
    panel = page.locator("[data-role=data-panel]")
    panel.wait_for()
    return panel


def test_at_1000_px_the_data_panel_pushes_the_notebook_aside(page: Any, server: Server, open_notebook: Any) -> None:
    panel = open_beside_the_panel(page, server, open_notebook)
    edge = panel.bounding_box()["x"]
    first = cell(page, 0)
    for selector in (".cell-head [data-action=delete]", ".cell-head [data-action=collapse-output]",
                     "[data-role=result] [data-action=download-csv]"):
        target = first.locator(selector)
        box = target.bounding_box()
        assert box["x"] + box["width"] <= edge, (selector, box, edge)
        assert uncovered(page, target), selector
    # A cell's action button works with the panel open: collapse the output, then bring it back.
    first.locator(".cell-head [data-action=collapse-output]").click()
    assert "output-collapsed" in (first.get_attribute("class") or "")
    first.locator(".cell-head [data-action=collapse-output]").click()
    assert "output-collapsed" not in (first.get_attribute("class") or "")
    # The end of a long line: the editor scrolls within the cell, left of the panel.
    scroller = first.locator(".cm-scroller")
    scroller.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
    end = first.locator(".cm-line", has_text="end' as long_text")
    assert end.bounding_box()["x"] + end.bounding_box()["width"] <= edge + 1
    assert scroller.bounding_box()["x"] + scroller.bounding_box()["width"] <= edge
    # Dragging its edge makes the panel wider and the notebook narrower, never under it.
    grip = panel.locator("[data-role=data-resize]").bounding_box()
    page.mouse.move(grip["x"] + 2, grip["y"] + 200)
    page.mouse.down()
    page.mouse.move(grip["x"] - 100, grip["y"] + 200, steps=5)
    page.mouse.up()
    wider = panel.bounding_box()
    assert wider["x"] < edge - 80, (wider, edge)
    delete = first.locator(".cell-head [data-action=delete]").bounding_box()
    assert delete["x"] + delete["width"] <= wider["x"]
    assert not page.js_errors


@SHOTS
def test_screenshot_of_the_data_panel_beside_a_notebook_at_1000_px(page: Any, server: Server,
                                                                   open_notebook: Any) -> None:
    open_beside_the_panel(page, server, open_notebook)
    page.screenshot(path=str(IMG / "data-panel-1000.png"))


def schema_rows(locator: Any) -> list[list[str]]:
    return locator.locator("[data-role=data-schema] tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent))")


def test_every_file_the_data_panel_lists_shows_its_columns(page: Any, server: Server, open_notebook: Any,
                                                           tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    csv = tmp_path / "fruit_schema.csv"
    csv.write_text("fruit,n,price\nbanana,372,1.5\napple,589,0.25\n")
    (server.data_dir / "lake" / "exports").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "label": ["x"]}),
                   server.data_dir / "lake" / "exports" / "ids.parquet")
    nb = server.notebook("file schemas", "select 1 as a as first;")
    open_notebook(page, nb["id"])
    page.click("[data-action=data-panel]")
    panel = page.locator("[data-role=data-panel]")
    panel.wait_for()
    page.set_input_files("[data-role=upload-input]", str(csv))
    uploaded = panel.locator("[data-role=upload-schema]")
    uploaded.locator("[data-role=data-schema]").wait_for()
    expected = [["fruit", "string"], ["n", "bigint"], ["price", "double"]]
    assert schema_rows(uploaded) == expected  # at once, in a notebook whose session never ran
    # Clicking the file in the listing shows them too.
    panel.locator("details[data-entry='uploads/'] > summary").click()
    row = panel.locator("details[data-entry='uploads/fruit_schema.csv']")
    row.locator("summary").click()
    row.locator("[data-role=data-schema]").wait_for()
    assert schema_rows(row) == expected
    # A Parquet file is read by the notebook's session: before it runs the panel says how to get them.
    panel.locator("details[data-entry='exports/'] > summary").click()
    parquet = panel.locator("details[data-entry='exports/ids.parquet']")
    parquet.locator("summary").click()
    assert "run a cell" in parquet.locator("[data-role=data-schema-note]").inner_text()
    cell(page, 0).locator(".cell-head [data-action=run]").click()
    wait_status(page, "done", 0)
    page.click("[data-role=data-refresh]")
    panel.locator("details[data-entry='exports/'] > summary").click()
    parquet.locator("summary").click()
    parquet.locator("[data-role=data-schema]").wait_for()
    assert schema_rows(parquet) == [["id", "bigint"], ["label", "string"]]
    assert not page.js_errors


def header_types(page: Any, n: int) -> list[str]:
    return cell(page, n).locator("[data-role=result] thead .col-type").all_inner_texts()


def test_column_types_read_the_same_in_every_view(page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("one vocabulary",
                         "select 1 as id, 'a' as name, cast(5 as decimal(38,0)) as amount, 7::bigint as big,"
                         " cast(1 as tinyint) as small as vt;\nsave overwrite vt as delta.`vocab.t`;",
                         "load delta.`vocab.t` as back;\nselect * from back as back2;",
                         "!desc vt;")
    open_notebook(page, nb["id"])
    page.click("[data-action=run-all]")
    wait_status(page, "done", 2)
    spark = ["int", "string", "decimal(38,0)", "bigint", "tinyint"]
    assert header_types(page, 0) == spark
    assert header_types(page, 1) == spark  # read back from delta
    desc = cell(page, 2).locator("[data-role=result] tbody tr").evaluate_all(
        "rows => rows.map(r => r.cells[1].textContent)")
    assert desc == spark
    page.click("[data-action=data-panel]")
    row = page.locator("[data-role=data-panel] details[data-table='vocab.t']")
    row.locator("summary").click()
    row.locator("[data-role=data-schema]").wait_for()
    delta = [r[1] for r in schema_rows(row)]
    assert delta == spark, delta
    session = page.locator("[data-session-table=vt]")
    session.wait_for()
    assert session.get_attribute("title") == ", ".join(
        f"{c} {t}" for c, t in zip(["id", "name", "amount", "big", "small"], spark, strict=True))
    assert not page.js_errors


JOB_NB = ("# Daily numbers", "select id, id * 2 as twice from range(250) as numbers;",
          SCRIPT + "big 600000")


def open_job_history(page: Any, server: Server, name: str) -> tuple[dict[str, Any], Any]:
    nb = server.notebook(f"{name} notebook", ("markdown", JOB_NB[0]), *JOB_NB[1:])
    made = run_job(server, nb["id"], name)
    assert made["run"]["status"] == "done", made["run"]["error"]
    page.goto(f"{server.url}/jobs?job={made['job']['id']}")
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    run = page.locator("[data-role=job-run]").first
    run.wait_for(state="attached")
    run.locator("summary").first.click()
    return made, run


def test_the_job_history_names_cells_and_shows_results_as_the_notebook_does(
        page: Any, server: Server) -> None:
    made, run = open_job_history(page, server, "history-shown")
    names = run.locator("[data-role=job-cell-name]").all_inner_texts()
    assert names == ["cell 2 (select id, id * 2 as twice from range(250) as numbers;)",
                     "cell 3 (--script)"], names
    text = run.inner_text()
    for rid in made["run"]["run_ids"]:
        assert rid not in text
    for cell_id in (o["cell_id"] for o in made["run"]["outputs"]):
        assert cell_id not in text  # no internal ids
    # The result is a table, its first rows only (of 250), as the notebook shows it.
    table = run.locator("[data-role=job-output]").nth(0).locator("[data-role=result]")
    assert table.locator("thead .col-name").all_inner_texts() == ["id", "twice"]
    assert table.get_attribute("data-total-rows") == "250"
    assert 0 < table.locator("tbody tr").count() <= 100
    # A long log: head and tail, the middle behind a marker with the whole log a click away.
    log = run.locator("[data-role=job-output]").nth(1)
    assert "hidden" in log.locator("[data-role=hidden-summary]").inner_text()
    assert log.locator("[data-role=log-lines] .line").count() <= 400
    assert run.locator("pre.job-output").count() == 0  # no screens of text
    # Each cell's output folds, and stays as it was left through the page's refresh.
    first = run.locator("[data-role=job-output]").nth(0)
    first.locator("summary").click()
    assert first.get_attribute("open") is None
    page.wait_for_timeout(5600)  # the page refreshes its jobs every 5 s
    assert run.get_attribute("open") is not None
    assert run.locator("[data-role=job-output]").nth(0).get_attribute("open") is None
    assert run.locator("[data-role=job-output]").nth(1).get_attribute("open") is not None
    assert not page.js_errors


@SHOTS
def test_screenshot_of_a_jobs_run(page: Any, server: Server) -> None:
    page.set_viewport_size({"width": 1200, "height": 900})
    open_job_history(page, server, "nightly numbers")
    page.screenshot(path=str(IMG / "job-run.png"))
