"""The demo in login mode with the sandbox on, as the member `mlsql-console demo` made (issue 30).

`make run` with CONSOLE_SINGLE_USER=false and CONSOLE_SANDBOX=on: the kernel runs under a leased
session uid with a private /dev/shm, its Ray actors under the Ray zone's uid. The demo's input is
`load parquet.`/tmp/mnist`` (the IPC hand-off, not the lake's direct reads the other walled seed test
takes), which is the path that failed for every new user before the fix. Run all in a fresh
session; then the same input read on actors by a smaller notebook, fresh and again after a restart
of its kernel (a new lease, a new hand-off folder).
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


READ_ON_ACTORS = [
    {"kind": "mlsql", "source": "load parquet.`/tmp/mnist` as mnist;"},
    {"kind": "mlsql", "source": '!python env "PYTHON_ENV=:";\n!python conf "runIn=driver";\n'
                                '!python conf "schema=st(field(rows,long))";'},
    {"kind": "python", "source": """--%python
--%input=mnist
--%output=counted
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
servers = ray_context.data_servers()

@ray.remote
def count(server):
    return sum(1 for _ in RayContext.collect_from([server]))

rows = sum(ray.get([count.remote(s) for s in servers]))
print(f"total workers {len(servers)}")
ray_context.build_result([{"rows": rows}])
"""},
]


def test_the_demo_trains_for_its_member_in_walled_sessions_and_after_a_restart(made: MadeRun) -> None:
    api = made.api("demo")
    status, me = api.call("GET", "/me")
    assert status == 200 and me["user"]["username"] == "demo" and not me["user"].get("is_admin"), me
    notebook = demo_notebook(api)
    runs = run_all(api, notebook)
    shown = "\n".join(text_of(r) for r in runs)
    assert [r["status"] for r in runs] == ["done"] * 4, shown[-4000:]
    assert "total workers 2" in shown and "cannot read" not in shown, shown[-3000:]
    assert "as delta.`ai_model.mnist_model`: done" in shown, shown[-2000:]
    log = made.data_dir / "lake" / "ai_model" / "mnist_model" / "_delta_log"
    assert len(list(log.glob("*.json"))) == 1

    # A restart gives the session a new lease and a new hand-off folder: the input must reach the
    # actors again. Shown with a notebook that takes the demo's hand-off (load, the Python cell's
    # input, actors reading it) without training, run before and after its restart: the demo is
    # trained once here, not twice.
    status, reader = api.call("POST", "/notebooks", {"name": "read on actors", "cells": READ_ON_ACTORS})
    assert status == 201, reader
    for attempt in ("fresh session", "after a restart"):
        runs = run_all(api, reader, timeout=300)
        shown = "\n".join(text_of(r) for r in runs)
        assert [r["status"] for r in runs] == ["done"] * 3, f"{attempt}: {shown[-4000:]}"
        assert "total workers 2" in shown and "cannot read" not in shown, f"{attempt}: {shown[-3000:]}"
        [result] = [e for e in runs[2]["events"] if e["type"] == "result"]
        assert result["rows"] == [[60000]], (attempt, result)
        status, _ = api.call("POST", f"/notebooks/{reader['id']}/restart", {})
        assert status == 202
