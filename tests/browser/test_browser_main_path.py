"""The main path as a new user takes it (issue 30): `make run`, the demo notebook, Run all.

The server is started by `make run` itself (tests/support/made_run.py), so what this proves is
what the README promises: the notebook `mlsql-console demo` wrote, served single-user with the
defaults (the sandbox on where bubblewrap is, a private /dev/shm per session), trains the seed's
TensorFlow model on two Ray actors and saves it as delta, and the saved model reads back. Once
by clicking Run all in Chromium; then what it stored and the saved model are read over REST.
Before issue 30's fix the training cell failed here every time ("data server …: its data is
on Ray node …, not here"), while the seed passed through every other door.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.made_run import MadeRun, demo_notebook, run_all, text_of

pytestmark = pytest.mark.slow

READ_BACK = "load delta.`ai_model.mnist_model` as m;\nselect count(*) as n from m as model_rows;"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MadeRun]:
    served = MadeRun(tmp_path_factory.mktemp("make-run") / "data")
    try:
        yield served
    finally:
        served.stop()


def _assert_trained(made: MadeRun, runs: list[dict[str, Any]]) -> None:
    shown = "\n".join(text_of(r) for r in runs)
    assert [r["status"] for r in runs] == ["done"] * 4, shown[-4000:] + made.log_text()[-2000:]
    assert "total workers 2" in shown, shown[-3000:]
    sources = {e.get("source", "") for e in runs[2]["events"] if e.get("type") == "output"}
    assert sum(s.startswith("Network pid=") for s in sources) == 2, sources  # both actors' own lines
    assert "as delta.`ai_model.mnist_model`: done" in shown, shown[-3000:]
    assert "LookupError" not in shown and "cannot read" not in shown, shown[-3000:]  # no fallback was needed
    assert any((made.data_dir / "lake" / "ai_model" / "mnist_model" / "_delta_log").glob("*.json"))


def test_the_demo_runs_all_in_chromium(made: MadeRun, browser: Any) -> None:
    notebook = demo_notebook(made.api())
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{made.url}/notebooks/{notebook['id']}")
        page.wait_for_selector("#app[data-ready='1'][data-connection='live']", state="attached")
        page.click("header [data-action=run-all]")
        cells = page.locator("section.cell")
        last = cells.nth(len(notebook["cells"]) - 1)
        # A cell that ends in any way stops the wait; the statuses below say which way.
        page.wait_for_function(
            "(n) => { const s = [...document.querySelectorAll('section.cell')].map(c => c.dataset.status);"
            " return s.length === n && (s.every(x => x === 'done') || s.some(x => ['error', 'cancelled',"
            " 'interrupted'].includes(x))); }", arg=len(notebook["cells"]), timeout=900_000, polling=500)
        statuses = [cells.nth(i).get_attribute("data-status") for i in range(len(notebook["cells"]))]
        assert statuses == ["done"] * 4, page.locator("#app").inner_text()[-4000:] + made.log_text()[-2000:]
        train = cells.nth(2).text_content() or ""
        assert "total workers 2" in train and "LookupError" not in train, train[-3000:]
        last.scroll_into_view_if_needed()
        assert "as delta.`ai_model.mnist_model`: done" in (last.text_content() or "")
        assert not errors
    finally:
        ctx.close()


def test_the_run_is_stored_and_its_model_reads_back_over_rest(made: MadeRun) -> None:
    """What the Chromium run left, read the way a script would: each cell's stored run, and the
    saved model through a REST run of another notebook. (The demo's Run all over REST is what
    .ci/run's smoke of `make run` does, and tests/sandbox/test_walls_demo.py in login mode: the
    demo is trained once here, not once per door.)"""
    api = made.api()
    notebook = demo_notebook(api)
    stored = api.get(f"/notebooks/{notebook['id']}/runs")["runs"]
    _assert_trained(made, [stored[c["id"]] for c in notebook["cells"]])
    status, reader = api.call("POST", "/notebooks", {"name": "read the model", "cells": [
        {"kind": "mlsql", "source": READ_BACK}]})
    assert status == 201, reader
    [run] = run_all(api, reader, timeout=120)
    assert run["status"] == "done", text_of(run)
    [result] = [e for e in run["events"] if e["type"] == "result"]
    assert result["name"] == "model_rows" and result["rows"][0][0] > 0, result


def test_the_demo_page_after_a_reload_shows_the_run(made: MadeRun, browser: Any, tmp_path: Path) -> None:
    """Nothing is lost on reload: the trained run's log is there when the page is opened again."""
    notebook = demo_notebook(made.api())
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        page.goto(f"{made.url}/notebooks/{notebook['id']}")
        page.wait_for_selector("#app[data-ready='1'][data-connection='live']", state="attached")
        train = page.locator("section.cell").nth(2)
        assert train.get_attribute("data-status") == "done"
        train.locator("text=total workers 2").wait_for(timeout=20_000)
    finally:
        ctx.close()
