"""A model's lineage through the real server and a real kernel (issue 32 item 3): the seed's shape
(load in one cell, a Python cell trains under dataMode=model, a third saves the model as a delta
table) makes the model table's version name the run that trained it and the table versions that
run learned from, in the run's manifest and in GET /api/lineage. (A kernel naming another
notebook's run as a trainer: tests/wire/test_forged_manifest.py.)"""
from __future__ import annotations

from typing import Any

from tests.support.clients import http, live_server_fixture, runs_ended as ended
from tests.support.live_server import LiveServer

live = live_server_fixture("model-lineage-data")

FEATURES = "select 1 as x, 0 as label as t;\nsave overwrite t as delta.`ml.features`;"
APPEND = "select 2 as x, 1 as label as t;\nsave append t as delta.`ml.features`;"
LOAD = "load delta.`ml.features` as features;"
TRAIN = ("--%python\n--%input=features\n--%output=m\n--%dataMode=model\n"
         "import pandas as pd\nrows = context.fetch_once_as_rows()\n"
         "context.build_result(pd.DataFrame({'weights': [float(len(list(rows)))]}))\n")
SAVE = "save overwrite m as delta.`ml.model`;"


def run(live: LiveServer, nb: Any, cell: int) -> str:
    status, answer = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": nb.cells[cell].id})
    assert status == 202, answer
    (r,) = ended(live, answer["run_ids"])
    assert r.status == "done", r.error
    return str(answer["run_ids"][0])


def test_a_saved_model_names_its_training_run_and_the_versions_it_learned_from(live: LiveServer) -> None:
    nb = live.notebook(FEATURES, APPEND, LOAD, TRAIN, SAVE)
    run(live, nb, 0)
    run(live, nb, 1)  # features v1
    run(live, nb, 2)
    trained = run(live, nb, 3)
    saved = run(live, nb, 4)

    status, manifest = http(live, "GET", f"/api/runs/{saved}/manifest")
    assert status == 200, manifest
    (write,) = [e for e in manifest["entries"] if e["access"] == "write"]
    assert write["table"] == "ml.model" and write["model"] is True, write
    assert write["trained_by"]["run_id"] == trained and write["trained_by"]["cell_id"] == nb.cells[3].id, write
    (source,) = write["sources"]
    assert (source["table"], source["version"], source["verified"]) == ("ml.features", 1, True), source
    assert source["read_by"]["cell_id"] == nb.cells[2].id, source

    status, lineage = http(live, "GET", "/api/lineage?table=ml.model")
    assert status == 200, lineage
    (v0,) = lineage["versions"]
    (writer,) = v0["writes"]
    assert writer["run_id"] == saved and writer["trained_by"]["run_id"] == trained, writer
    assert [(s["table"], s["version"]) for s in writer["sources"]] == [("ml.features", 1)], writer
