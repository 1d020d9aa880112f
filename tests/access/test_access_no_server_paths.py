"""Nothing a user sees names the server's data folder (issue 21 §6): every stored event of the Byzer
commands that touch files (and of the demo notebook's run, on Ray) is scanned for its absolute path,
as are completion, a link's JSON and its /p/ page. Paths show as `lake:…`, `cache:…` or not at all.
Also: a link gives no run ids; passwords have at most 1024 characters.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from findings_support import Client, error_of, result_of
from security_support import Served

CELLS = [
    "select 1.0 as x, 'a' as b as t;",
    "--%python\n--%input=t\n--%output=o\n--%cache=true\nfrom pyjava.api.mlsql import RayContext\n"
    "ray_context = RayContext.connect(globals(), None)\nray_context.build_result([{'x': 1.0}])\n",
    "!cache t session;",
    "save overwrite t as delta.`fz.t`;\n!delta show tables;",
    "!delta info fz.t;",
    "!fs -ls -R fz;",
    "select array(x * 1.0) as features, 2.0 * x + 1.0 as label from range(20) t(x) as line;\n"
    "train line as LinearRegression.`models/line` where evaluateTable=\"line\" as r;",
    "load parquet.`${__cache_dir__}/nope` as y;",
    "load parquet.`{data}/server/console.db` as z;",
    "load parquet.`{data}/lake/missing` as w;",
    "select * from read_text('{data}/secret_key') as s;",
]


def _forms(data_dir: Path) -> list[str]:
    return sorted({str(data_dir), os.path.realpath(data_dir)})


def _without(text: str, written: list[str]) -> str:
    for w in written:
        text = text.replace(w, "")
    return text


def _leaks(text: str, data_dir: Path) -> list[str]:
    return [f for f in _forms(data_dir) if f in text]


def test_byzer_commands_completion_and_links_never_show_the_data_folder(mu_app: Flask, served: Served) -> None:
    data_dir = mu_app.extensions["config"].data_dir
    alice = Client(served.url).login("alice")
    nb = alice.notebook("paths", *[c.replace("{data}", str(data_dir)) if c.startswith(("load", "select *")) else
                                   (("python", c) if c.startswith("--%python") else c) for c in CELLS])
    views = [alice.run(nb, i, timeout=240) for i in range(len(CELLS))]
    assert [v["status"] for v in views] == ["done"] * 7 + ["error"] * 4, [(v["status"], error_of(v)) for v in views]
    # What each shows instead of the path.
    assert result_of(views[2])["rows"][0][2] == "cache:tables/t.parquet"
    assert ["fz.t", "lake:fz/t"] in result_of(views[3])["rows"]
    assert ["lake:fz/t/_delta_log", "dir"] in [r[:2] for r in result_of(views[5])["rows"]]
    model = dict(result_of(views[6])["rows"])["modelPath"]
    assert model.startswith("lake:models/line/_model_") and model.endswith("/model/0"), model
    assert error_of(views[7])["message"].startswith("path cache:nope ")  # ${__cache_dir__}/nope
    assert "private data folder;" in error_of(views[8])["message"]
    texts = {"runs": alice.call("GET", f"/api/notebooks/{nb['id']}/runs").text}
    for v in views:
        texts[v["id"]] = json.dumps(v)
        texts[f"{v['id']} log"] = alice.call("GET", f"/api/runs/{v['id']}/log").text
    # The --%cache=true cell's note says where its table went, as cache:.
    assert "cache:" in texts[views[1]["id"]], texts[views[1]["id"]][:2000]
    done = alice.call("POST", f"/api/notebooks/{nb['id']}/complete", {"source": "select ${", "cursor": 9})
    assert done.status == 200, done
    assert any(i["label"] == "${__cache_dir__}" and i["detail"].startswith("cache:") for i in done.json["items"])
    texts["complete"] = done.text
    token = alice.call("POST", f"/api/notebooks/{nb['id']}/links").json["token"]
    link, page = Client(served.url).call("GET", f"/api/links/{token}"), Client(served.url).call("GET", f"/p/{token}")
    # Their cells' sources are shown as written, and three name the data folder: the rest may not.
    written = [f"{data_dir}/server/console.db", f"{data_dir}/lake/missing", f"{data_dir}/secret_key"]
    texts["link"], texts["page"] = _without(link.text, written), _without(page.text, written)
    leaks = {name: _leaks(text, data_dir) for name, text in texts.items() if _leaks(text, data_dir)}
    assert leaks == {}, {name: texts[name][:3000] for name in leaks}
    # A link shows the runs, but none of their ids (a viewer could aim events at a run by its id).
    for v in views:
        assert v["id"] not in link.text and v["id"] not in page.text
    assert all(c["last_run"] is not None for c in link.json["cells"])


def test_passwords_have_at_most_1024_characters(mu_app: Flask, served: Served) -> None:
    """Refused by the body's decoder (auth.py password_field), before scrypt sees a character: the
    decoder's own words prove it, where a bound on the time taken only guessed."""
    alice = Client(served.url).login("alice")
    r = Client(served.url).call("POST", "/api/login", {"username": "alice", "password": "p" * 1_000_000})
    assert r.status == 400 and r.json["error"] == "'password' has at most 1024 characters", r
    r = alice.call("POST", "/api/me/password", {"old_password": "correct horse battery", "new_password": "n" * 1025})
    assert r.status == 400 and r.json["error"] == "a password has at most 1024 characters", r
    r = alice.call("POST", "/api/me/password", {"old_password": "o" * 1025, "new_password": "n" * 20})
    assert r.status == 400 and "at most 1024" in r.json["error"], r
    assert Client(served.url).login("alice").csrf  # the password is unchanged


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_demo_runs_stored_events_never_show_the_data_folder(ray_head: Any) -> None:
    from console.demo import seed_notebook
    from console.demo.datasets import write_mnist
    from tests.support.live_server import REAL_KERNEL, LiveServer

    data_dir = Path(ray_head.data_dir)
    mnist = data_dir / "lake" / "mnist-paths" / "mnist"
    write_mnist(str(mnist), synthetic=True, rows=2000, partitions=2)
    live = LiveServer(str(data_dir), kernel_module=REAL_KERNEL, RAY_HEAD_OWNER=False, RAY_CLUSTERS="shared")
    try:
        cells = seed_notebook()["cells"]
        cells[0] = {**cells[0], "source": cells[0]["source"].replace("/tmp/mnist", str(mnist))}
        user = live.store.ensure_user("admin")
        nb = live.store.create_notebook(f"demo-{time.monotonic_ns()}", owner_id=user.id, cells=cells)
        run_ids = live.manager.run(user.id, nb.id, "all", None)
        deadline = time.monotonic() + 1500
        while any(live.store.get_run(r).status in ("queued", "running") for r in run_ids):
            assert time.monotonic() < deadline, "the demo did not end"
            time.sleep(1)
        assert [live.store.get_run(r).status for r in run_ids] == ["done"] * len(run_ids)
        from console.outputs.view import latest_views

        views = latest_views(live.store, nb.id, inline_bytes=1 << 30, result_rows=100)
        events = [dataclasses.asdict(e) for v in views.values()
                  for e in [*v.head, *v.tail, *v.metrics, v.result, v.error] if e is not None]
        assert events and not _leaks(json.dumps(events), data_dir)
        # Source lines the user wrote name the data set's path; the engine's own lines do not.
        assert any("cache:" in e.get("text", "") for e in events), [e.get("text") for e in events][:50]
    finally:
        live.close()
