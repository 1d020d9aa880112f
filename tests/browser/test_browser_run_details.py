"""A run's details in the page (issue 32): a cell's status opens what the run read (a delta table at
its version), "Re-run as recorded" reads that version again after a later write, and "Compare
with the run before" says the replay is the same. Chromium, a real kernel, real delta tables."""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.clients import job_run_ended
from tests.support.live_server import REAL_KERNEL, ServerProcess, start_server


def run_each(page: Any, real: ServerProcess, nb: dict[str, Any], count: int) -> Any:
    """Open the notebook and run its first `count` cells one by one, each to done; its cells."""
    page.goto(f"{real.url}/notebooks/{nb['id']}")
    page.wait_for_selector("#app[data-connection='live']", state="attached")
    cells = page.locator("section.cell")
    for i in range(count):
        cells.nth(i).locator("[data-action=run]").click()
        cells.nth(i).locator("xpath=self::*[@data-status='done']").wait_for(timeout=120000)
    return cells


def job_run_on_two_days(real: ServerProcess, name: str, more: str = "") -> dict[str, Any]:
    """A disabled job over a notebook of parameter `day` (and `more`), run with monday, then friday."""
    nb = real.notebook(f"job-{name}", 'set day = "monday" where type="defaultParam";\n'
                       "select '${day}' as day as t;" + more)
    job: dict[str, Any] = real.api("POST", "/jobs", {"notebook_id": nb["id"], "name": name,
                                                     "every_minutes": 1440, "enabled": False})
    for day in ("monday", "friday"):
        queued = real.api("POST", f"/jobs/{job['id']}/run", {"params": {"day": day}})
        ended = job_run_ended(real, job["id"], queued["id"])  # the scheduler runs it on its own thread
        assert ended["status"] == "done", ended
    return job


def hold_first(page: Any, pattern: str) -> list[Any]:
    """The first request of the page to `pattern` waits (its Playwright route, in the list returned)
    until the test continues it; later ones go through."""
    held: list[Any] = []

    def hold(route: Any) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(pattern, hold)
    return held


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path_factory.mktemp("run-details") / "data", kernel_module=REAL_KERNEL)
    yield srv
    srv.stop()


def test_a_cells_run_details_replay_it_as_recorded_and_compare(page: Any, real: ServerProcess) -> None:
    nb = real.notebook("details", "select 1 as a as t;\nsave overwrite t as delta.`rd.t`;",
                       "load delta.`rd.t` as f;\nselect count(*) as n from f as c;",
                       "select 2 as a as u;\nsave append u as delta.`rd.t`;")
    cells = run_each(page, real, nb, 3)  # write v0, read it (1 row), append v1
    reader = cells.nth(1)
    recorded_id = reader.get_attribute("data-run-id")
    reader.locator("[data-role=status]").click()
    panel = page.locator("[data-role=run-details]")
    panel.locator("[data-role=manifest-entry][data-access=read]", has_text="rd.t v0").wait_for()
    assert "checked" in panel.locator("[data-role=manifest-entry]").first.inner_text()
    panel.locator("[data-action=replay]").click()
    queued = panel.locator("[data-role=run-details-answer] [data-run-id]", has_text="queued as a new run")
    new_run = queued.get_attribute("data-run-id")
    panel.locator("button.close").click()
    # The replay's output replaces the cell's: still one row, read from v0 though v1 holds two.
    page.locator(f"section.cell[data-run-id='{new_run}'][data-status='done']").wait_for(timeout=120000)
    reader.locator("[data-role=status]").click()
    panel = page.locator("[data-role=run-details]")
    panel.locator("[data-role=manifest-entry][data-access=read]", has_text="rd.t v0").wait_for()
    assert panel.locator("[data-role=replay-of]").get_attribute("data-run-id") == recorded_id
    assert "Compare with the recorded run" in panel.locator("[data-action=compare]").inner_text()
    panel.locator("[data-action=compare]").click()
    panel.locator("[data-role=run-diff][data-same='1']").wait_for()
    assert page.js_errors == []


def test_a_jobs_two_runs_with_other_parameters_show_what_differs(page: Any, real: ServerProcess) -> None:
    job_run_on_two_days(real, "daily", "\nsave overwrite t as delta.`rd.days`;")
    page.goto(f"{real.url}/jobs")
    page.locator("[data-role=job-history-toggle]").click()
    newest = page.locator("[data-role=job-run]").first
    newest.locator("summary").first.click()
    newest.locator("[data-action=compare-runs]").click()
    diff = newest.locator("[data-role=job-run-diff][data-same='0']")
    diff.locator("li", has_text="parameter day: monday → friday").wait_for()
    diff.locator("li", has_text="rd.days").wait_for()  # the version it wrote: v0, then v1
    assert page.js_errors == []


def test_a_run_opened_while_the_jobs_list_is_read_again_stays_open(page: Any, real: ServerProcess) -> None:
    """A refresh builds each job's row, then replaces the list once every row is built: a run the
    user opened in a row built before the click must stay open (it closed, c33b61e)."""
    nb = real.notebook("job-race", "select 1 as a as t;")
    jobs = [real.api("POST", "/jobs", {"notebook_id": nb["id"], "name": name, "every_minutes": 1440,
                                       "enabled": False}) for name in ("first", "second")]
    for job in jobs:
        queued = real.api("POST", f"/jobs/{job['id']}/run", {})
        assert job_run_ended(real, job["id"], queued["id"])["status"] == "done"
    first, second = jobs
    page.goto(f"{real.url}/jobs?job={first['id']}&job={second['id']}")  # both histories open
    page.locator("#app[data-live='1']").wait_for(state="attached")
    mine = page.locator(f"[data-role=job][data-job-id='{first['id']}'] [data-role=job-run]").first
    mine.wait_for()
    assert mine.get_attribute("open") is None
    answered: list[str] = []
    page.on("requestfinished", lambda r: answered.append(r.url))
    held = hold_first(page, f"**/api/jobs/{second['id']}/runs*")
    # A change the page is told of: it reads the list again; the second job's runs wait.
    real.api("PATCH", f"/jobs/{second['id']}", {"name": "second, renamed"})
    end = time.monotonic() + 60
    while not held or not any(f"/api/jobs/{first['id']}/runs" in u for u in answered):
        assert time.monotonic() < end, "the refresh did not ask for both jobs' runs"
        page.wait_for_timeout(50)  # lets Playwright deliver the page's events
    mine.locator("summary").first.click()  # the first job's row of this refresh is built: closed
    held[0].continue_()
    page.locator("[data-role=job] strong", has_text="second, renamed").wait_for()
    assert page.locator(f"[data-role=job][data-job-id='{first['id']}'] [data-role=job-run]").first \
        .get_attribute("open") is not None
    assert page.js_errors == []


def test_a_comparison_shown_while_the_jobs_list_is_read_again_stays(page: Any, real: ServerProcess) -> None:
    """Each refresh builds the runs' rows anew: a comparison the user asked for, answered while a
    refresh was on its way, went with the row it was drawn in (a fresh-clone run's failure)."""
    job = job_run_on_two_days(real, "kept")
    page.goto(f"{real.url}/jobs?job={job['id']}")  # its history open
    page.locator("#app[data-live='1']").wait_for(state="attached")
    page.locator("[data-role=job-run]").first.locator("summary").first.click()
    # Whatever else a user did in a row (a selection, a chart's zoom) stays too: an unchanged run
    # keeps its element. A mark on the older run's element tells.
    page.locator("[data-role=job-run]").nth(1).evaluate("el => { el.dataset.mark = 'kept'; }")
    held = hold_first(page, f"**/api/jobs/{job['id']}/runs?*")
    real.api("PATCH", f"/jobs/{job['id']}", {"name": "kept, renamed"})  # the page reads the list again
    end = time.monotonic() + 60
    while not held:
        assert time.monotonic() < end, "the refresh did not ask for the runs"
        page.wait_for_timeout(50)  # lets Playwright deliver the page's events
    newest = page.locator("[data-role=job-run]").first
    newest.locator("[data-action=compare-runs]").click()
    newest.locator("[data-role=job-run-diff] li", has_text="parameter day: monday → friday").wait_for()
    held[0].continue_()
    page.locator("[data-role=job] strong", has_text="kept, renamed").wait_for()
    newest = page.locator("[data-role=job-run]").first
    assert newest.get_attribute("open") is not None
    assert "parameter day: monday → friday" in newest.locator("[data-role=job-run-diff]").inner_text()
    assert page.locator("[data-role=job-run]").nth(1).get_attribute("data-mark") == "kept"
    assert page.js_errors == []


def test_the_data_panel_names_the_runs_that_wrote_and_read_each_version(page: Any, real: ServerProcess) -> None:
    nb = real.notebook("lineage", "select 1 as a as t;\nsave overwrite t as delta.`rd.lin`;",
                       "load delta.`rd.lin` as f;\nselect count(*) as n from f as c;")
    run_each(page, real, nb, 2)
    page.click("[data-action=data-panel]")
    row = page.locator("[data-role=data-panel] details[data-table='rd.lin']")
    row.locator("summary").first.click()
    v0 = row.locator("[data-role=data-lineage][data-version='0']")
    v0.wait_for()
    assert "written by lineage" in v0.inner_text() and "read by 1 run(s): lineage" in v0.inner_text(), v0.inner_text()
    assert page.js_errors == []


def test_a_models_lineage_names_its_training_run_and_the_versions_it_learned_from(
        page: Any, real: ServerProcess) -> None:
    # The seed's shape: load in one cell, a Python cell trains under dataMode=model, another saves it.
    nb = real.notebook("model-lineage", "select 1 as x, 0 as label as t;\nsave overwrite t as delta.`rd.feat`;",
                       "select 2 as x, 1 as label as t;\nsave append t as delta.`rd.feat`;",
                       "load delta.`rd.feat` as features;",
                       "--%python\n--%input=features\n--%output=m\n--%dataMode=model\nimport pandas as pd\n"
                       "context.build_result(pd.DataFrame({'w': [float(len(list(context.fetch_once_as_rows())))]}))\n",
                       "save overwrite m as delta.`rd.model`;")
    cells = run_each(page, real, nb, 5)
    trainer = cells.nth(3).get_attribute("data-run-id")
    # The run page of the save: the model table it wrote, trained by cell 4's run from rd.feat v1.
    cells.nth(4).locator("[data-role=status]").click()
    panel = page.locator("[data-role=run-details]")
    made = panel.locator(f"[data-role=made-of][data-trained-by='{trainer}']")
    made.wait_for()
    assert made.get_attribute("data-trained-in") == nb["cells"][3]["id"]
    assert f"model trained by run {trainer}" in made.inner_text() and "from rd.feat v1" in made.inner_text()
    panel.locator("button.close").click()
    # The data panel: version 0 of the model table says the same.
    page.click("[data-action=data-panel]")
    row = page.locator("[data-role=data-panel] details[data-table='rd.model']")
    row.locator("summary").first.click()
    v0 = row.locator("[data-role=data-lineage][data-version='0']")
    v0.locator(f"[data-role=made-of][data-trained-by='{trainer}']", has_text="from rd.feat v1").wait_for()
    assert "written by model-lineage" in v0.inner_text(), v0.inner_text()
    # Its small graph: made from rd.feat v1.
    up = row.locator("[data-role=data-upstream] .lineage-node")
    assert up.all_inner_texts() == ["rd.feat v1"] and up.first.get_attribute("data-table") == "1"
    assert page.js_errors == []
