"""The notebook and folder endpoints through Flask's test client."""
from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

CELLS = [{"kind": "mlsql", "source": "select 1 as a;"}, {"kind": "python", "source": "print(1)"}]


def _create(client: FlaskClient, name: str = "n", folder: str = "/", cells=CELLS) -> dict:  # type: ignore[no-untyped-def]
    r = client.post("/api/notebooks", json={"name": name, "folder": folder, "cells": cells})
    assert r.status_code == 201, r.json
    return r.json  # type: ignore[no-any-return]


def test_health(client: FlaskClient) -> None:
    assert client.get("/api/health").json == {"status": "ok", "database": "sqlite"}


def test_create_get_list(client: FlaskClient) -> None:
    nb = _create(client, "first", "/team/a")
    assert nb["revision"] == 1 and nb["owner_id"] and nb["folder"] == "/team/a"
    got = client.get(f"/api/notebooks/{nb['id']}").json
    assert [c["source"] for c in got["cells"]] == ["select 1 as a;", "print(1)"]
    root = client.get("/api/notebooks").json
    assert root == {"folder": "/", "folders": [{"path": "/team", "name": "team"}], "notebooks": []}
    listing = client.get("/api/notebooks?folder=/team/a").json
    assert [n["name"] for n in listing["notebooks"]] == ["first"]
    assert "cells" not in listing["notebooks"][0]


def test_stored_outputs_come_from_runs_not_the_notebook(client: FlaskClient, app) -> None:  # type: ignore[no-untyped-def]
    nb = _create(client)
    store = app.extensions["store"]
    cid = nb["cells"][1]["id"]
    run = store.create_run(nb["id"], cid, "print(1)")
    store.append_output(run.id, [{"seq": 1, "text": "1\n"}])
    store.finish_run(run.id, "done")
    # The page draws stored output from GET .../runs; the notebook itself carries none.
    cells = client.get(f"/api/notebooks/{nb['id']}").json["cells"]
    assert all(set(c) == {"id", "kind", "source", "position", "view"} for c in cells)
    runs = client.get(f"/api/notebooks/{nb['id']}/runs").json["runs"]
    assert list(runs) == [cid] and runs[cid]["status"] == "done"
    outputs = [e for e in runs[cid]["events"] if e["type"] == "output"]
    assert [(e["text"], e["seq"]) for e in outputs] == [("1\n", 1)]


def test_put_conflict_overwrites_nothing(client: FlaskClient) -> None:
    nb = _create(client)
    url = f"/api/notebooks/{nb['id']}"
    ok = client.put(url, json={"base_revision": 1, "name": "theirs", "cells": [{"kind": "mlsql", "source": "theirs"}]})
    assert ok.status_code == 200 and ok.json["revision"] == 2
    stale = client.put(url, json={"base_revision": 1, "name": "mine", "cells": [{"kind": "mlsql", "source": "mine"}]})
    assert stale.status_code == 409
    assert stale.json["status"] == 409 and stale.json["current_revision"] == 2 and "revision" in stale.json["error"]
    now = client.get(url).json
    assert now["name"] == "theirs" and [c["source"] for c in now["cells"]] == ["theirs"]
    assert client.put(url, json={"cells": []}).status_code == 400  # base_revision is required


def test_rename_move_duplicate_delete(client: FlaskClient) -> None:
    nb = _create(client)
    url = f"/api/notebooks/{nb['id']}"
    r = client.post(f"{url}/rename", json={"name": "renamed"})
    assert r.status_code == 200 and r.json["name"] == "renamed" and r.json["revision"] == 2
    assert client.post(f"{url}/rename", json={"name": "x", "base_revision": 1}).status_code == 409
    r = client.post(f"{url}/move", json={"folder": "/elsewhere"})
    assert r.json["folder"] == "/elsewhere"
    dup = client.post(f"{url}/duplicate")
    assert dup.status_code == 201 and dup.json["name"] == "renamed (copy)" and dup.json["folder"] == "/elsewhere"
    assert client.delete(url).status_code == 204
    gone = client.get(url)
    assert gone.status_code == 404 and gone.json["status"] == 404
    assert client.get(f"/api/notebooks/{dup.json['id']}").status_code == 200


def test_folders(client: FlaskClient) -> None:
    assert client.post("/api/folders", json={"path": "/x/y"}).json == {"path": "/x/y"}
    assert client.post("/api/folders", json={"path": "/x/y"}).status_code == 409
    _create(client, folder="/x/y")
    assert client.get("/api/folders?path=/x").json["folders"] == [{"path": "/x/y", "name": "y"}]
    assert client.post("/api/folders/rename", json={"path": "/x", "new_path": "/z"}).json == {"path": "/z"}
    assert client.get("/api/notebooks?folder=/z/y").json["notebooks"][0]["folder"] == "/z/y"
    assert client.delete("/api/folders?path=/z").status_code == 409
    r = client.delete("/api/folders?path=/z&recursive=true")
    assert r.status_code == 200 and r.json["deleted_notebooks"] == 1
    assert client.delete("/api/folders").status_code == 400


def test_api_on_postgres(cfg, postgres_db: str) -> None:  # type: ignore[no-untyped-def]
    from console.server import create_app

    app = create_app({**cfg, "DATABASE_URL": postgres_db})
    client = app.test_client()
    assert client.get("/api/health").json["database"] == "postgresql"
    nb = _create(client, "on pg", "/pg")
    assert client.get(f"/api/notebooks/{nb['id']}").json["name"] == "on pg"
    app.extensions["store"].close()


def test_delete_removes_the_notebooks_log_files(client: FlaskClient, cfg: Any) -> None:
    nb = _create(client)
    logs = cfg.data_dir / "server" / "logs" / nb["id"]
    logs.mkdir(parents=True)
    (logs / "run.log.gz").write_bytes(b"x")
    other = cfg.data_dir / "server" / "logs" / "someone-else"
    other.mkdir(parents=True)
    assert client.delete(f"/api/notebooks/{nb['id']}").status_code == 204
    assert not logs.exists() and other.exists()
