"""The demo in login mode with the sandbox on, as the member `mlsql-console demo` made (issue 30).

`make run` with CONSOLE_SINGLE_USER=false and CONSOLE_SANDBOX=on: the kernel runs under a leased
session uid with a private /dev/shm, its Ray actors under the Ray zone's uid. The demo's input is
`load parquet.`/tmp/mnist`` (the IPC hand-off, not the lake's direct reads the other walled seed test
takes), which is the path that failed for every new user before the fix. Run all twice: in a
fresh session, and again after a restart of the kernel (a new lease, a new hand-off folder).
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.made_run import MadeRun, demo_notebook, run_all, text_of

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MadeRun]:
    served = MadeRun(tmp_path_factory.mktemp("make-run-login") / "data",
                     {"CONSOLE_SINGLE_USER": "false", "CONSOLE_SANDBOX": "on"})
    try:
        yield served
    finally:
        served.stop()


def test_the_demo_trains_for_its_member_in_walled_sessions_and_after_a_restart(made: MadeRun) -> None:
    api = made.api("demo")
    status, me = api.call("GET", "/me")
    assert status == 200 and me["user"]["username"] == "demo" and not me["user"].get("is_admin"), me
    notebook = demo_notebook(api)
    for attempt in ("fresh session", "after a restart"):
        runs = run_all(api, notebook)
        shown = "\n".join(text_of(r) for r in runs)
        assert [r["status"] for r in runs] == ["done"] * 4, f"{attempt}: {shown[-4000:]}"
        assert "total workers 2" in shown and "cannot read" not in shown, f"{attempt}: {shown[-3000:]}"
        assert "as delta.`ai_model.mnist_model`: done" in shown, shown[-2000:]
        status, _ = api.call("POST", f"/notebooks/{notebook['id']}/restart", {})
        assert status == 202
    log = made.data_dir / "lake" / "ai_model" / "mnist_model" / "_delta_log"
    assert len(list(log.glob("*.json"))) == 2  # one version per Run all
