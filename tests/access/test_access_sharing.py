"""Sharing by user name, folder inheritance, listings that show only what one may see, forks,
revisions (authors, diff), and read-only links that can be revoked."""
from __future__ import annotations

from typing import Any

from flask import Flask


def _nb(client: Any, name: str, folder: str = "/", cells: list | None = None) -> dict:
    r = client.post("/api/notebooks", json={"name": name, "folder": folder,
                                            "cells": cells or [{"kind": "mlsql", "source": "select 1 as a;"}]})
    assert r.status_code == 201, r.json
    return r.json  # type: ignore[no-any-return]


def test_listing_shows_only_what_the_user_may_see(as_user: Any) -> None:
    alice, vera, mallory = as_user("alice"), as_user("vera"), as_user("mallory")
    private = _nb(alice, "private")
    shared = _nb(alice, "shared", "/team/a")
    _nb(alice, "deep", "/team/b/c")
    _nb(mallory, "mine")
    assert [n["name"] for n in vera.get("/api/notebooks").json["notebooks"]] == []
    assert vera.get("/api/notebooks").json["folders"] == []
    assert vera.get(f"/api/notebooks/{private['id']}").status_code == 404
    r = alice.post(f"/api/notebooks/{shared['id']}/shares", json={"user": "vera", "role": "viewer"})
    assert r.status_code == 201 and r.json["username"] == "vera"
    assert [f["path"] for f in vera.get("/api/notebooks").json["folders"]] == ["/team"]
    assert [f["path"] for f in vera.get("/api/folders?path=/team").json["folders"]] == ["/team/a"]
    assert [n["name"] for n in vera.get("/api/notebooks?folder=/team/a").json["notebooks"]] == ["shared"]
    assert vera.get("/api/notebooks?folder=/team/b/c").json["notebooks"] == []
    root = {n["name"] for n in alice.get("/api/notebooks").json["notebooks"]}
    assert root == {"private"}  # mallory's root notebook is hers alone


def test_folder_roles_are_inherited_and_by_name(as_user: Any) -> None:
    alice, eddie = as_user("alice"), as_user("eddie")
    assert alice.post("/api/folders", json={"path": "/team"}).status_code == 201
    nb = _nb(alice, "deep", "/team/x/y")
    assert eddie.get(f"/api/notebooks/{nb['id']}").status_code == 404
    bad = alice.post("/api/folders/shares", json={"path": "/team", "user": "nobody", "role": "editor"})
    assert bad.status_code == 400 and "nobody" in bad.json["error"]
    assert alice.post("/api/folders/shares", json={"path": "/team", "user": "eddie", "role": "god"}).status_code == 400
    r = alice.post("/api/folders/shares", json={"path": "/team", "user": "eddie", "role": "editor"})
    assert r.status_code == 201
    got = eddie.get(f"/api/notebooks/{nb['id']}").json
    assert got["role"] == "editor" and alice.get(f"/api/notebooks/{nb['id']}").json["role"] == "owner"
    cell = got["cells"][0]["id"]
    r = eddie.patch(f"/api/notebooks/{nb['id']}/cells/{cell}", json={"base_revision": 1, "source": "x"})
    assert r.status_code == 200
    assert eddie.delete(f"/api/notebooks/{nb['id']}").status_code == 403  # deleting is the owner's
    assert eddie.post("/api/notebooks", json={"name": "n", "folder": "/team/x"}).status_code == 201
    # Moving a share-holder's folder share away removes the access.
    share_id = alice.get("/api/folders/shares?path=/team").json["shares"][0]["id"]
    assert alice.delete(f"/api/folders/shares/{share_id}").status_code == 204
    assert eddie.get(f"/api/notebooks/{nb['id']}").status_code == 404


def test_new_folders_belong_to_their_creator(as_user: Any) -> None:
    alice, mallory = as_user("alice"), as_user("mallory")
    _nb(alice, "a", "/alice/proj")
    assert mallory.post("/api/notebooks", json={"name": "x", "folder": "/alice/proj"}).status_code == 403
    assert mallory.post("/api/notebooks", json={"name": "x", "folder": "/alice/other"}).status_code == 403
    assert mallory.post("/api/folders", json={"path": "/alice/sneaky"}).status_code == 403
    assert mallory.post("/api/folders/rename", json={"path": "/alice", "new_path": "/mine"}).status_code == 403
    assert mallory.delete("/api/folders?path=/alice&recursive=1").status_code == 403
    assert mallory.post("/api/notebooks", json={"name": "x", "folder": "/mallory/work"}).status_code == 201
    assert alice.post("/api/notebooks", json={"name": "y", "folder": "/mallory/work"}).status_code == 403


def test_fork_copies_into_the_forkers_workspace(mu_app: Flask, as_user: Any) -> None:
    alice, vera, mallory = as_user("alice"), as_user("vera"), as_user("mallory")
    nb = _nb(alice, "original", "/team")
    assert mallory.post(f"/api/notebooks/{nb['id']}/fork").status_code == 404
    alice.post(f"/api/notebooks/{nb['id']}/shares", json={"user": "vera", "role": "viewer"})
    r = vera.post(f"/api/notebooks/{nb['id']}/fork")
    assert r.status_code == 201
    fork = r.json
    vera_id = mu_app.extensions["store"].get_user_by_name("vera").id
    assert fork["owner_id"] == vera_id and fork["folder"] == "/" and fork["name"] == "original (copy)"
    assert [c["source"] for c in fork["cells"]] == [c["source"] for c in nb["cells"]]
    assert vera.put(f"/api/notebooks/{fork['id']}", json={"base_revision": 1, "cells": []}).status_code == 200
    assert alice.get(f"/api/notebooks/{nb['id']}").json["revision"] == 1  # the original is untouched
    assert alice.get(f"/api/notebooks/{fork['id']}").status_code == 404  # and the fork is vera's


def test_revisions_have_authors_and_diffs(as_user: Any) -> None:
    alice, eddie, rudy = as_user("alice"), as_user("eddie"), as_user("rudy")
    nb = _nb(alice, "hist", cells=[{"kind": "mlsql", "source": "select 1 as a;\nselect 2 as b;"},
                                   {"kind": "markdown", "source": "# keep"}])
    alice.post(f"/api/notebooks/{nb['id']}/shares", json={"user": "eddie", "role": "editor"})
    alice.post(f"/api/notebooks/{nb['id']}/shares", json={"user": "rudy", "role": "runner"})
    c0, c1 = (c["id"] for c in nb["cells"])
    eddie.put(f"/api/notebooks/{nb['id']}", json={"base_revision": 1, "cells": [
        {"id": c0, "kind": "mlsql", "source": "select 1 as a;\nselect 3 as b;"},
        {"id": c1, "kind": "markdown", "source": "# keep"},
        {"kind": "python", "source": "print(1)"}]})
    revs = rudy.get(f"/api/notebooks/{nb['id']}/revisions").json["revisions"]
    assert [(r["number"], r["author"]) for r in revs] == [(2, "eddie"), (1, "alice")]
    assert all(r["created_at"] for r in revs)
    diff = rudy.get(f"/api/notebooks/{nb['id']}/revisions/diff?from=1&to=2").json
    by_status = {c["status"]: c for c in diff["cells"]}
    assert set(by_status) == {"changed", "same", "added"}
    assert "-select 2 as b;" in by_status["changed"]["diff"] and "+select 3 as b;" in by_status["changed"]["diff"]
    assert by_status["changed"]["diff"].startswith(f"--- r1/{c0}\n+++ r2/{c0}\n")
    assert by_status["added"]["kind"] == "python" and "+print(1)" in by_status["added"]["diff"]
    back = rudy.get(f"/api/notebooks/{nb['id']}/revisions/diff?from=2&to=1").json
    assert [c["status"] for c in back["cells"]].count("removed") == 1
    assert rudy.get(f"/api/notebooks/{nb['id']}/revisions/diff?from=1").json["to"] == 2
    assert rudy.get(f"/api/notebooks/{nb['id']}/revisions/diff").status_code == 400
    assert rudy.post(f"/api/notebooks/{nb['id']}/revisions/1/restore", json={"base_revision": 2}).status_code == 403
    assert eddie.post(f"/api/notebooks/{nb['id']}/revisions/1/restore", json={"base_revision": 2}).status_code == 200


def test_links_show_stored_outputs_and_can_be_revoked(mu_app: Flask, as_user: Any) -> None:
    alice = as_user("alice")
    nb = _nb(alice, "linked")
    store = mu_app.extensions["store"]
    run = store.create_run(nb["id"], nb["cells"][0]["id"], "select 1 as a;")
    store.append_output(run.id, [{"seq": 1, "text": "epoch 1 loss 0.5\n"}])
    store.append_metrics(run.id, [{"seq": 1, "values": {"loss": 0.5}, "step": 1},
                                  {"seq": 2, "values": {"loss": 0.25}, "step": 2}])
    store.finish_run(run.id, "done", result={"type": "result", "name": "t", "columns": [{"name": "a", "type": "int"}],
                                             "rows": [[1]], "total_rows": 1})
    link = alice.post(f"/api/notebooks/{nb['id']}/links").json
    assert len(link["token"]) >= 43 and link["url"] == f"/p/{link['token']}" and link["active"]
    anon = mu_app.test_client()
    view = anon.get(f"/api/links/{link['token']}").json
    assert view["name"] == "linked" and view["cells"][0]["last_run"]["outputs"][0]["text"] == "epoch 1 loss 0.5\n"
    assert "owner_id" not in view
    page = anon.get(link["url"])
    # The app's CSP: the page's own bundle (publish.js) and nothing inline or from elsewhere.
    assert page.status_code == 200 and "script-src 'self';" in page.headers["Content-Security-Policy"]
    assert "connect-src 'self'" in page.headers["Content-Security-Policy"]
    html = page.get_data(as_text=True)
    assert "epoch 1 loss 0.5" in html and "<polyline" in html and "<td>1</td>" in html
    # A link grants nothing else, and runs nothing.
    assert anon.get(f"/api/notebooks/{nb['id']}").status_code == 401
    assert anon.post(f"/api/notebooks/{nb['id']}/run", json={"all": True}).status_code == 401
    assert alice.get(f"/api/notebooks/{nb['id']}/links").json["links"][0]["active"]
    assert alice.delete(f"/api/notebooks/{nb['id']}/links/{link['token']}").json["active"] is False
    assert anon.get(link["url"]).status_code == 404
    assert anon.get(f"/api/links/{link['token']}").status_code == 404
    assert anon.get("/p/not-a-token").status_code == 404


def test_publish_view_escapes_everything(mu_app: Flask, as_user: Any) -> None:
    alice = as_user("alice")
    xss = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    nb = _nb(alice, f"name {xss}", cells=[{"kind": "markdown", "source": xss}, {"kind": "mlsql", "source": xss}])
    store = mu_app.extensions["store"]
    run = store.create_run(nb["id"], nb["cells"][1]["id"], xss)
    store.append_output(run.id, [{"seq": 1, "text": xss}])
    store.append_metrics(run.id, [{"seq": 1, "values": {xss: 1.0}}])
    store.finish_run(run.id, "error", error={"kind": "sql", "message": xss},
                     result={"type": "result", "name": "t", "columns": [{"name": xss, "type": "x"}],
                             "rows": [[xss]], "total_rows": 1})
    token = alice.post(f"/api/notebooks/{nb['id']}/links").json["token"]
    html = mu_app.test_client().get(f"/p/{token}").get_data(as_text=True)
    assert "<script>" not in html and "<img" not in html and "onerror=\"" not in html
    assert html.count("&lt;script&gt;alert(2)&lt;/script&gt;") >= 6
