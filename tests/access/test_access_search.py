"""Search across notebooks (GET /api/search): by name and by cell text, never through a notebook the
caller may not read, not by its name, its cell ids or a snippet; and its query decoded strictly."""
from __future__ import annotations

from typing import Any

from flask import Flask


def _notebook(client: Any, name: str, folder: str, *sources: str) -> dict[str, Any]:
    r = client.post("/api/notebooks", json={"name": name, "folder": folder,
                                            "cells": [{"kind": "mlsql", "source": s} for s in sources]})
    assert r.status_code == 201, r.json
    return r.json  # type: ignore[no-any-return]


def test_a_user_cannot_find_the_text_of_a_notebook_they_may_not_read(mu_app: Flask, as_user: Any) -> None:
    alice, vera, mallory = as_user("alice"), as_user("vera"), as_user("mallory")
    secret = _notebook(alice, "payroll", "/hr", "select 1 as a;", "-- the zebrafish salary table\nselect 2 as b;")
    shared = _notebook(alice, "zebrafish notes", "/lab", "# nothing secret")
    r = alice.post(f"/api/notebooks/{shared['id']}/shares", json={"user": "vera", "role": "viewer"})
    assert r.status_code in (200, 201)

    # The owner finds both: one by cell text (line, snippet, where the match is), one by name.
    own = alice.get("/api/search?q=ZEBRAFISH").json["notebooks"]
    assert [(n["name"], n["name_match"], n["cell_matches"]) for n in own] == [
        ("zebrafish notes", True, 0), ("payroll", False, 1)]
    hit = own[1]["cells"][0]
    assert (hit["id"], hit["index"], hit["line"]) == (secret["cells"][1]["id"], 1, 1)
    assert hit["snippet"][hit["start"]:hit["end"]] == "zebrafish"

    # Vera reads only the shared one; Mallory reads neither. Nothing of payroll comes back to them.
    for client, want in ((vera, ["zebrafish notes"]), (mallory, [])):
        body = client.get("/api/search?q=zebrafish").get_data(as_text=True)
        found = client.get("/api/search?q=zebrafish").json["notebooks"]
        assert [n["name"] for n in found] == want
        assert "payroll" not in body and secret["id"] not in body and secret["cells"][1]["id"] not in body
        assert client.get("/api/search?q=salary").json["notebooks"] == []
        assert client.get("/api/search?q=payroll").json["notebooks"] == []

    # Shared later, found at once: the search follows the role, not an index of its own.
    alice.post(f"/api/notebooks/{secret['id']}/shares", json={"user": "mallory", "role": "viewer"})
    assert [n["name"] for n in mallory.get("/api/search?q=salary").json["notebooks"]] == ["payroll"]
    assert mu_app.test_client().get("/api/search?q=salary").status_code == 401


def test_the_query_is_decoded_strictly(as_user: Any) -> None:
    alice = as_user("alice")
    _notebook(alice, "odd", "/", "select '100%_done' as pct;")
    for bad, says in (("", "'q' is required"), ("?q=", "'q' is required"), ("?q=x&limit=0", "'limit'"),
                      ("?q=x&limit=ten", "'limit'"), ("?q=x&folder=/", "unknown parameter folder"),
                      ("?q=" + "x" * 201, "at most 200")):
        r = alice.get(f"/api/search{bad}")
        assert r.status_code == 400 and says in r.json["error"], (bad, r.json)
    # LIKE's wildcards are text here: '%_' matches only itself.
    assert [n["name"] for n in alice.get("/api/search?q=%25_d").json["notebooks"]] == ["odd"]
    assert alice.get("/api/search?q=_x%25").json["notebooks"] == []
