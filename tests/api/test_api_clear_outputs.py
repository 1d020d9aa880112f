"""Clear outputs sticks: the cells' stored runs go (outputs, metrics, log file), so a reload,
the export and the run API no longer show them; a run still going is kept and named."""
from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from console.outputs.logfile import relative_path


def _notebook(client: FlaskClient) -> dict[str, Any]:
    cells = [{"kind": "mlsql", "source": "select 1 as a as t;"}, {"kind": "mlsql", "source": "select 2 as b as u;"},
             {"kind": "mlsql", "source": "select 3 as c as v;"}]
    r = client.post("/api/notebooks", json={"name": "clearing", "cells": cells})
    assert r.status_code == 201
    return r.json  # type: ignore[no-any-return]


def _finished_run(app: Flask, nb: str, cell: str, text: str) -> str:
    store = app.extensions["store"]
    run = store.create_run(nb, cell, "select;")
    store.append_output(run.id, [{"seq": 1, "text": text}])
    store.append_metrics(run.id, [{"seq": 1, "values": {"loss": 0.5}, "step": 1}])
    store.set_log_file(run.id, relative_path(nb, run.id))
    store.finish_run(run.id, "done", result={"type": "result", "name": "t", "columns": [{"name": "a", "type": "int"}],
                                             "rows": [[1]], "total_rows": 1})
    return str(run.id)


def test_clearing_one_cell_forgets_its_runs_and_log_only(app: Flask, client: FlaskClient) -> None:
    from console.server.deps import get_config

    with app.app_context():
        data_dir = get_config().data_dir
    nb = _notebook(client)
    c1, c2, c3 = (c["id"] for c in nb["cells"])
    old = _finished_run(app, nb["id"], c1, "older\n")
    new = _finished_run(app, nb["id"], c1, "newer\n")
    kept = _finished_run(app, nb["id"], c2, "other cell\n")
    log = data_dir / relative_path(nb["id"], new)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"")
    running = app.extensions["store"].create_run(nb["id"], c3, "select;", status="running").id

    r = client.post(f"/api/notebooks/{nb['id']}/outputs/clear", json={"cell_id": c1})
    assert r.status_code == 200, r.json
    assert r.json == {"cleared": [c1], "runs": 2, "running": []}
    runs = client.get(f"/api/notebooks/{nb['id']}/runs").json["runs"]
    assert set(runs) == {c2, c3} and runs[c2]["id"] == kept
    assert not log.exists()
    for gone in (old, new):
        assert client.get(f"/api/runs/{gone}").status_code == 404
    exported = client.get(f"/api/notebooks/{nb['id']}/export?format=ipynb").json
    assert exported["cells"][0]["outputs"] == [] and exported["cells"][1]["outputs"]

    r = client.post(f"/api/notebooks/{nb['id']}/outputs/clear", json={"all": True})
    assert r.status_code == 200 and r.json == {"cleared": [c2], "runs": 1, "running": [c3]}
    runs = client.get(f"/api/notebooks/{nb['id']}/runs").json["runs"]
    assert list(runs) == [c3] and runs[c3]["id"] == running  # its output is still arriving


def test_bad_requests_say_what_is_wrong(client: FlaskClient) -> None:
    nb = _notebook(client)
    r = client.post(f"/api/notebooks/{nb['id']}/outputs/clear", json={})
    assert r.status_code == 400 and "'cell_id'" in r.json["error"] and "'all'" in r.json["error"]
    r = client.post(f"/api/notebooks/{nb['id']}/outputs/clear", json={"cell_id": "nope"})
    assert r.status_code == 404 and "no cell 'nope'" in r.json["error"] and "3 cells" in r.json["error"]
    r = client.post("/api/notebooks/nosuch/outputs/clear", json={"all": True})
    assert r.status_code == 404
