"""Parameters are values, not SQL: a runner's "run now" values through a live server and a real
session (console/lang/paramsafe.py). A runner's values run as the job's owner, so a value that
ended its literal would run the runner's SQL with the owner's rights."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.clients import http
from tests.support.jobs import after_runs, jobs_server
from tests.support.live_server import LiveServer

DECLARE = 'set day = "2026-12-01" where type="defaultParam";\nset n = "10" where type="defaultParam";'


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with jobs_server(str(tmp_path_factory.mktemp("jobs-injection")), JOBS_LEASE_SECONDS=3.0) as server:
        yield server


def _job(live: LiveServer, *cells: str | tuple[str, str]) -> tuple[Any, dict[str, Any]]:
    store = live.store
    runner = store.ensure_user("runner1")
    nb = live.notebook(DECLARE, *cells, owner="alice")
    store.set_share(runner.id, "runner", notebook_id=nb.id)
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *"}, user="alice")
    assert code == 201, job
    return nb, job


def _run_now(live: LiveServer, job: dict[str, Any], params: dict[str, str]) -> tuple[int, Any]:
    return http(live, "POST", f"/api/jobs/{job['id']}/run", {"params": params}, user="runner1")


def _finished(live: LiveServer, job_id: str, run_id: str) -> Any:
    def ended() -> Any:
        run = live.store.get_job_run(run_id)
        return run if run.status not in ("queued", "running") else None
    return after_runs(live, ended, f"job run {run_id} ending")


@pytest.mark.parametrize("value", [
    "x' as d, 'injected' as e --",            # ends the '…' literal
    'x" as e, \'injected\' as f --',           # ends the "…" literal (a string in Spark SQL)
    "x\\' as d, 'injected' as e --",          # a backslash that would swallow the escape
    "O'Brien \\ \"quoted\"\nnext line",        # ordinary text with quotes: kept exactly
])
def test_a_value_inside_quotes_stays_one_string(live: LiveServer, value: str) -> None:
    _, job = _job(live, "select '${day}' as d, \"${day}\" as e as t;")
    code, queued = _run_now(live, job, {"day": value})
    assert code == 202, queued
    run = _finished(live, job["id"], queued["id"])
    assert run.status == "done", run.error
    cell = live.store.get_run(run.run_ids[1])
    assert cell.result["rows"] == [[value, value]], cell.result  # two columns, each the value, nothing more


def test_an_ordinary_value_runs_as_documented(live: LiveServer) -> None:
    _, job = _job(live, "select '${day}' as d, ${n} + 1 as m as t;")
    code, queued = _run_now(live, job, {"day": "2026-12-02", "n": "41"})
    assert code == 202, queued
    run = _finished(live, job["id"], queued["id"])
    assert run.status == "done", run.error
    assert live.store.get_run(run.run_ids[1]).result["rows"] == [["2026-12-02", 42]]


@pytest.mark.parametrize(("cell", "params", "named"), [
    ("select ${n} + 1 as m as t;", {"n": "1 as m, 'injected' as e --"}, "parameter n"),
    ("select ${n} + 1 as m as t;", {"n": "(select 1)"}, "parameter n"),
    ("select * from range(${n}) as t;", {"n": "1) union all select 2 --"}, "parameter n"),
    ("select 1 as a, 2 as b as u;\nselect a from u where b > 1 -${n} and a = 2 as t;", {"n": "-5"}, "parameter n"),
    ('set x = "${day}";\nselect ${x} as m as t;', {"day": "1 or 1=1"}, "variable x"),
    ("select 1 as a -- ${day}\n as t;", {"day": "x\nunion all select 2"}, "parameter day"),
])
def test_a_value_that_would_be_sql_is_a_400_naming_it(live: LiveServer, cell: str, params: dict[str, str],
                                                       named: str) -> None:
    nb, job = _job(live, cell)
    before = len(live.store.job_runs(job["id"]))
    code, body = _run_now(live, job, params)
    assert code == 400 and named in body["error"] and "cell 2" in body["error"], body
    assert len(live.store.job_runs(job["id"])) == before  # nothing queued
    # The same values are refused when the job is made with them, and for a notebook run.
    code, body = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "cron": "0 2 * * *", "params": params},
                      user="alice")
    assert code == 400 and named in body["error"], body
    code, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True, "params": params}, user="runner1")
    assert code == 400 and named in body["error"], body


def test_a_value_for_a_shell_line_is_plain_text_only(live: LiveServer, tmp_path: Path) -> None:
    from console.server.deps import CONFIG_KEY

    lake = Path(live.app.extensions[CONFIG_KEY].data_dir) / "lake"
    _, job = _job(live, 'set out = `echo ${day}` where type="shell";\nselect \'${out}\' as o as t;')
    code, body = _run_now(live, job, {"day": "x; touch injected"})
    assert code == 400 and "parameter day" in body["error"] and "shell" in body["error"], body
    code, body = _run_now(live, job, {"day": "$(touch injected)"})
    assert code == 400, body
    code, queued = _run_now(live, job, {"day": "hello world 2026-12-02"})
    assert code == 202, queued
    run = _finished(live, job["id"], queued["id"])
    assert run.status == "done", run.error
    assert live.store.get_run(run.run_ids[1]).result["rows"] == [["hello world 2026-12-02"]]
    assert not (lake / "injected").exists()


def test_the_kernel_refuses_what_the_server_could_not_see(live: LiveServer) -> None:
    # A macro's text is code run when it is called: the server's look ahead sees only a set text,
    # so the session itself refuses a macro built from a value that came from outside.
    _, job = _job(live, "set m = '''select ${n} + 1 as m as t;''';\n!m;")
    code, queued = _run_now(live, job, {"n": "1 as m, 'injected' as e --"})
    assert code == 202, queued
    ended = _finished(live, job["id"], queued["id"])
    assert ended.status == "error" and "macro !m" in ended.error and "parameter" in ended.error, ended.error
    cell = live.store.get_run(ended.run_ids[1])
    assert cell.status == "error" and "injected" not in str(cell.result), cell
    code, queued = _run_now(live, job, {"n": "41"})  # the macro with an ordinary value from outside: refused too
    ended = _finished(live, job["id"], queued["id"])
    assert ended.status == "error" and "macro !m" in ended.error, ended.error
    code, queued = _run_now(live, job, {})  # the notebook's own default: its own code, runs
    ended = _finished(live, job["id"], queued["id"])
    assert ended.status == "done", ended.error
    assert live.store.get_run(ended.run_ids[1]).result["rows"] == [[11]]


def test_a_value_holding_a_substitution_is_refused(live: LiveServer) -> None:
    # The override is a `set` whose text is substituted: ${__cache_dir__} would read the session's paths.
    _, job = _job(live, "select '${day}' as d as t;")
    code, body = _run_now(live, job, {"day": "${__cache_dir__}"})
    assert code == 400 and "parameter day" in body["error"] and "${" in body["error"], body


def test_a_value_in_python_code_is_plain_text_only(live: LiveServer) -> None:
    # ${day} in a Python cell's code is substituted before the code runs: a quote would end its string.
    _, job = _job(live, ("python", "--%python\n--%output=o\nimport pandas as pd\n"
                                   "context.build_result(pd.DataFrame({'v': ['${day}']}))"))
    code, body = _run_now(live, job, {"day": "x']})); import os; os.system('touch /tmp/injected'); ({'v': ['"})
    assert code == 400 and "parameter day" in body["error"] and "Python code" in body["error"], body
