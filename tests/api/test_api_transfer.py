"""Export and import in the product's notebook format, and the pages that serve the frontend."""
from __future__ import annotations

import json

from flask.testing import FlaskClient

CELLS = [
    {"kind": "mlsql", "source": "load parquet.`/tmp/mnist` as mnist;"},
    {"kind": "python", "source": "--%python\n--%input=mnist\nprint('你好')\n"},
    {"kind": "markdown", "source": "# Notes\n"},
]


def test_round_trip(client: FlaskClient) -> None:
    nb = client.post("/api/notebooks", json={"name": "Round trip", "folder": "/t", "cells": CELLS}).json
    r = client.get(f"/api/notebooks/{nb['id']}/export")
    assert r.status_code == 200 and 'filename="Round_trip.json"' in r.headers["Content-Disposition"]
    exported = r.json
    assert exported["format"] == "mlsql-console-notebook" and exported["version"] == 1
    assert [{k: c[k] for k in ("kind", "source")} for c in exported["cells"]] == CELLS
    imported = client.post("/api/notebooks/import?folder=/imported", data=json.dumps(exported))
    assert imported.status_code == 201
    copy = imported.json
    assert copy["id"] != nb["id"] and copy["name"] == "Round trip" and copy["folder"] == "/imported"
    assert [(c["id"], c["kind"], c["source"]) for c in copy["cells"]] == [
        (c["id"], c["kind"], c["source"]) for c in nb["cells"]]
    again = client.get(f"/api/notebooks/{copy['id']}/export").json
    assert again["cells"] == exported["cells"] and again["name"] == exported["name"]


def test_export_with_outputs(client: FlaskClient, app) -> None:  # type: ignore[no-untyped-def]
    nb = client.post("/api/notebooks", json={"name": "n", "cells": CELLS[:1]}).json
    store = app.extensions["store"]
    run = store.create_run(nb["id"], nb["cells"][0]["id"], CELLS[0]["source"])
    store.append_output(run.id, [{"seq": 1, "text": "loaded\n"}])
    store.finish_run(run.id, "done")
    plain = client.get(f"/api/notebooks/{nb['id']}/export").json
    assert "outputs" not in plain["cells"][0]
    full = client.get(f"/api/notebooks/{nb['id']}/export?outputs=1").json
    assert full["cells"][0]["outputs"]["outputs"][0]["text"] == "loaded\n"


def test_import_minimal_and_foreign_ids(client: FlaskClient) -> None:
    minimal = {"format": "mlsql-console-notebook", "version": 1, "name": "m",
               "cells": [{"kind": "mlsql", "source": "select 1 as a;", "id": "not a valid id!"},
                         {"kind": "mlsql", "source": "select 2 as b;", "id": "dup"},
                         {"kind": "mlsql", "source": "select 3 as c;", "id": "dup"}]}
    r = client.post("/api/notebooks/import", json=minimal)
    assert r.status_code == 201 and r.json["folder"] == "/"
    ids = [c["id"] for c in r.json["cells"]]
    assert ids[1] == "dup" and len(set(ids)) == 3 and ids[0] != "not a valid id!"


def test_import_rejects_other_files(client: FlaskClient) -> None:
    for bad, message in [
        ({"cells": []}, "format"),
        ({"format": "mlsql-console-notebook", "version": 2, "name": "x", "cells": []}, "newer"),
        ({"format": "mlsql-console-notebook", "version": 1, "name": "x",
          "cells": [{"kind": "r", "source": ""}]}, "kind"),
    ]:
        r = client.post("/api/notebooks/import", json=bad)
        assert r.status_code == 400 and message in r.json["error"]
    assert client.get("/api/notebooks").json["notebooks"] == []


def test_frontend_pages(client: FlaskClient) -> None:
    for path in ("/", "/notebooks/abc123"):
        r = client.get(path)
        assert r.status_code == 200 and b"<html" in r.data and r.mimetype == "text/html"
