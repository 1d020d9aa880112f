"""The Schedule… dialog, the Jobs page and the parameter form, in Chromium against a real server.

The server is the production one (gunicorn), so its scheduler runs in the worker as it does in
`mlsql-console serve`; the job is fired with "Run now" rather than by waiting for a minute.
"""
from __future__ import annotations

from typing import Any

from browser_support import reveal
from tests.support.live_server import ServerProcess as Server

NB = ('set day = "x" where type="defaultParam";', "select concat('day=', '${day}') as d as t;")


def test_schedule_from_the_dialog_see_next_firings_and_the_run_in_the_history(
        page: Any, server: Server, open_notebook: Any) -> None:
    nb = server.notebook("jobs-dialog", *NB)
    open_notebook(page, nb["id"])
    reveal(page, "[data-role='schedule']").click()  # on the toolbar, or in its menu on a narrow one
    dialog = page.locator("[data-role='schedule-dialog']")
    dialog.locator("[data-role='job-cron']").fill("30 2 * * *")
    dialog.locator("[data-role='job-timezone']").fill("Europe/Paris")
    page.wait_for_function("() => [...document.querySelectorAll(\"[data-role='job-preview'] li\")]"
                           ".filter((li) => li.textContent.includes(', 02:30 CE')).length === 3")
    dialog.locator("[data-role='job-cron']").fill("99 * * * *")
    page.wait_for_selector("[data-role='job-preview'][data-state='error']")
    assert "maximum" in page.inner_text("[data-role='job-preview']")
    dialog.locator("[data-role='job-cron']").fill("30 2 * * *")
    dialog.locator("[data-role='job-param'][data-param='day']").fill("2026-12-01")
    dialog.locator("[data-role='job-name']").fill("nightly")
    dialog.locator("[data-role='job-retries']").fill("2")
    dialog.locator("[data-role='job-retry-delay']").fill("45")
    dialog.locator("[data-role='dialog-ok']").click()
    page.wait_for_url("**/jobs?job=*")
    made = server.api("GET", f"/jobs/{page.url.split('job=')[1]}")
    assert (made["retries"], made["retry_delay_seconds"]) == (2, 45), made
    page.wait_for_selector("#app[data-ready='1']", state="attached")
    job = page.locator("[data-role='job']", has_text="nightly")
    assert "02:30" in job.locator("[data-role='job-next']").inner_text()
    job.locator("[data-role='job-run-now']").click()
    # This job's own status: the server is shared with other tests' jobs (the dashboard test's ran).
    job.locator("[data-role='job-last-status'][data-status='done']").wait_for(state="attached", timeout=90000)
    # the page came with ?job=<id>, so that job's history is open: its run, with the cells' outputs
    page.wait_for_selector("[data-role='job-run'][data-trigger='manual'][data-status='done']", state="attached")
    outputs = page.locator("[data-role='job-run'] [data-role='job-output']").all_text_contents()
    assert any("day=2026-12-01" in text for text in outputs), outputs
    # the notebook page says which job made the output it shows
    open_notebook(page, nb["id"])
    page.wait_for_selector("[data-role='run-by-job']")
    assert page.inner_text("[data-role='run-by-job']") == "run by job nightly"
    assert page.js_errors == []


def test_the_parameter_form_runs_the_notebook_with_the_typed_value(page: Any, server: Server,
                                                                   open_notebook: Any) -> None:
    nb = server.notebook("params-form", *NB)
    open_notebook(page, nb["id"])
    page.fill("[data-role='param-input'][data-param='day']", "typed-value")
    page.click("[data-role='params-run']")
    page.wait_for_function("() => document.body.innerText.includes('day=typed-value')", timeout=90000)
    page.fill("[data-role='param-input'][data-param='day']", "")
    page.click("[data-role='params-run']")
    page.wait_for_function("() => document.body.innerText.includes('day=x')", timeout=90000)
    assert page.js_errors == []


def test_the_jobs_page_follows_the_servers_jobs_changed_without_a_reload(page: Any, server: Server) -> None:
    """The Jobs page updates when the server says a job changed (jobs_changed over its socket), not
    on a timer: each change below is on the page within 3 s, less than the 5 s it used to poll at
    (it now polls once a minute, and only while its socket is down), and the page is never reloaded."""
    nb = server.notebook("jobs-live", *NB)
    first = server.api("POST", "/jobs", {"notebook_id": nb["id"], "cron": "0 3 * * *", "name": "live-first"})
    page.goto(f"{server.url}/jobs")
    page.wait_for_selector("#app[data-live='1']", state="attached")  # watch_jobs acknowledged
    page.wait_for_selector(f"[data-role='job'][data-job-id='{first['id']}'][data-enabled='true']", state="attached")
    page.evaluate("() => { window.sameDocument = true; }")  # gone if the page were loaded again

    server.api("PATCH", f"/jobs/{first['id']}", {"enabled": False})
    page.wait_for_selector(f"[data-role='job'][data-job-id='{first['id']}'][data-enabled='false']",
                           state="attached", timeout=3000)
    second = server.api("POST", "/jobs", {"notebook_id": nb["id"], "every_minutes": 60, "name": "live-second"})
    row = f"[data-role='job'][data-job-id='{second['id']}']"
    page.wait_for_selector(f"{row} [data-role='job-last-status'][data-status='']", state="attached", timeout=3000)
    server.api("POST", f"/jobs/{second['id']}/run", {})
    page.wait_for_selector(f"{row} [data-role='job-last-status']:not([data-status=''])", state="attached",
                           timeout=3000)
    server.api("DELETE", f"/jobs/{first['id']}")
    page.wait_for_selector(f"[data-role='job'][data-job-id='{first['id']}']", state="detached", timeout=3000)
    assert page.evaluate("() => window.sameDocument") is True
    assert page.js_errors == []
