"""A cell's chart view survives an .ipynb export and import (metadata.mlsql_console.view)."""
from __future__ import annotations

import json

from flask.testing import FlaskClient

from console.interchange import from_ipynb, to_ipynb

VIEW = {"mode": "chart", "chart": {"type": "bar", "x": "label", "y": ["n"], "agg": "sum", "group": None}}


def test_ipynb_round_trip_keeps_the_chart_view(client: FlaskClient) -> None:
    cells = [{"kind": "mlsql", "source": "select 1 as label, 2 as n as t;", "view": VIEW},
             {"kind": "mlsql", "source": "select 2 as x as u;"}]
    nb = client.post("/api/notebooks", json={"name": "charted", "cells": cells}).json
    exported = client.get(f"/api/notebooks/{nb['id']}/export?format=ipynb").json
    first, second = exported["cells"]
    assert first["metadata"]["mlsql_console"]["view"] == VIEW
    assert "view" not in second["metadata"]["mlsql_console"]
    r = client.post("/api/notebooks/import", json=exported)
    assert r.status_code == 201, r.json
    assert [c.get("view") for c in r.json["cells"]] == [VIEW, None]


def test_a_bad_view_in_an_ipynb_is_refused_naming_the_cell(client: FlaskClient) -> None:
    radar = {"mode": "chart", "chart": {"type": "radar"}}
    data = to_ipynb("n", [{"kind": "mlsql", "source": "select 1;"},
                          {"kind": "mlsql", "source": "select 2;", "view": radar}])
    r = client.post("/api/notebooks/import", json=data)
    assert r.status_code == 400
    assert "cell 2" in r.json["error"] and "radar" in r.json["error"]
    data["cells"][1]["metadata"]["mlsql_console"]["view"] = "bar"
    r = client.post("/api/notebooks/import", json=data)
    assert r.status_code == 400 and 'cell 2: "metadata.mlsql_console.view" must be an object' in r.json["error"]


def test_plain_jupyter_metadata_is_ignored() -> None:
    data = to_ipynb("n", [{"kind": "python", "source": "x = 1"}])
    data["cells"][0]["metadata"] = {"mlsql_console": "not ours", "tags": ["a"]}
    back = from_ipynb(json.loads(json.dumps(data)))
    assert back["cells"] == [{"kind": "python", "source": "x = 1"}]
