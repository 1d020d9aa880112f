"""Cell and revision endpoints: every edit carries base_revision; restore makes a new revision."""
from __future__ import annotations

from flask.testing import FlaskClient


def _nb(client: FlaskClient) -> dict:
    r = client.post("/api/notebooks", json={"name": "n", "cells": [{"kind": "mlsql", "source": "a"}]})
    return r.json  # type: ignore[no-any-return]


def test_cell_operations(client: FlaskClient) -> None:
    nb = _nb(client)
    base = f"/api/notebooks/{nb['id']}/cells"
    first = nb["cells"][0]["id"]
    r = client.post(base, json={"base_revision": 1, "kind": "python", "source": "print(2)", "position": 0})
    assert r.status_code == 201 and r.json["revision"] == 2 and r.json["cell"]["position"] == 0
    new = r.json["cell"]["id"]
    r = client.patch(f"{base}/{first}", json={"base_revision": 2, "source": "b", "kind": "markdown"})
    assert r.status_code == 200
    assert r.json["cells"][1] == {"id": first, "kind": "markdown", "source": "b", "position": 1, "view": None}
    r = client.post(f"{base}/{new}/move", json={"base_revision": 3, "position": 1})
    assert [c["id"] for c in r.json["cells"]] == [first, new]
    r = client.delete(f"{base}/{new}?base_revision=4")
    assert r.status_code == 200 and [c["id"] for c in r.json["cells"]] == [first] and r.json["revision"] == 5


def test_cell_conflicts_and_errors(client: FlaskClient) -> None:
    nb = _nb(client)
    base = f"/api/notebooks/{nb['id']}/cells"
    cid = nb["cells"][0]["id"]
    assert client.patch(f"{base}/{cid}", json={"base_revision": 1, "source": "x"}).status_code == 200
    stale = client.patch(f"{base}/{cid}", json={"base_revision": 1, "source": "y"})
    assert stale.status_code == 409 and stale.json["current_revision"] == 2
    assert client.patch(f"{base}/{cid}", json={"base_revision": 2}).status_code == 400
    assert client.patch(f"{base}/{cid}", json={"base_revision": 2, "kind": "scala"}).status_code == 400
    assert client.patch(f"{base}/nope", json={"base_revision": 2, "source": "x"}).status_code == 404
    assert client.post(base, json={"base_revision": "2"}).status_code == 400
    assert client.post(base, json={"base_revision": True}).status_code == 400
    assert client.delete(f"{base}/{cid}").status_code == 400
    assert client.delete(f"{base}/{cid}?base_revision=x").status_code == 400
    assert client.get(f"/api/notebooks/{nb['id']}").json["cells"][0]["source"] == "x"


def test_revisions_and_restore(client: FlaskClient) -> None:
    nb = _nb(client)
    url = f"/api/notebooks/{nb['id']}"
    client.put(url, json={"base_revision": 1, "name": "later", "cells": [{"kind": "python", "source": "z"}]})
    revs = client.get(f"{url}/revisions").json["revisions"]
    assert [r["number"] for r in revs] == [2, 1]
    one = client.get(f"{url}/revisions/1").json
    assert one["snapshot"]["name"] == "n" and one["snapshot"]["cells"][0]["source"] == "a"
    r = client.post(f"{url}/revisions/1/restore", json={"base_revision": 2})
    assert r.status_code == 200 and r.json["revision"] == 3 and r.json["name"] == "n"
    assert r.json["cells"][0]["id"] == nb["cells"][0]["id"]
    assert client.post(f"{url}/revisions/1/restore", json={"base_revision": 2}).status_code == 409
    assert client.get(f"{url}/revisions/9").status_code == 404
    assert client.get(f"{url}/revisions/x").status_code == 404


def test_a_typed_body_refuses_what_it_does_not_declare(client: FlaskClient) -> None:
    """A body is its dataclass (server/validate.py body_as): a misspelt field is a 400 naming the ones
    it takes, not silently ignored (a `postion` would have added the cell at the end)."""
    nb = _nb(client)
    base = f"/api/notebooks/{nb['id']}/cells"
    r = client.post(base, json={"base_revision": 1, "source": "x", "postion": 0})
    assert r.status_code == 400
    assert r.json["error"] == "unknown field postion; this body takes base_revision, kind, source, position"
    r = client.post(f"{base}/{nb['cells'][0]['id']}/move", json={"base_revision": 1})
    assert r.status_code == 400 and r.json["error"] == "'position' is required"
    r = client.post("/api/folders", json={"path": "/t", "owner": "mallory"})
    assert r.status_code == 400 and r.json["error"] == "unknown field owner; this body takes path"
    assert client.get(f"/api/notebooks/{nb['id']}").json["revision"] == 1  # nothing was written


def test_a_cell_edit_is_a_typed_body_where_a_null_view_clears_and_a_missing_one_keeps(client: FlaskClient) -> None:
    nb = _nb(client)
    url = f"/api/notebooks/{nb['id']}/cells/{nb['cells'][0]['id']}"
    r = client.patch(url, json={"base_revision": 1, "sorce": "typo"})
    assert r.status_code == 400 and r.json["error"] == "unknown field sorce; this body takes base_revision, " \
                                                       "source, kind, view"
    chart = {"mode": "chart", "chart": {"type": "bar", "x": "a", "y": ["b"]}}
    r = client.patch(url, json={"base_revision": 1, "view": chart})
    assert r.status_code == 200 and r.json["cells"][0]["view"]["mode"] == "chart", r.json
    r = client.patch(url, json={"base_revision": r.json["revision"], "source": "b"})  # no view: kept
    assert r.status_code == 200 and r.json["cells"][0]["view"]["mode"] == "chart", r.json
    r = client.patch(url, json={"base_revision": r.json["revision"], "view": None})  # null: the table again
    assert r.status_code == 200 and r.json["cells"][0]["view"] is None, r.json
