"""Dashboards over the API (console/server/api/dashboards.py), logged in for real: who may read, pin,
arrange and refresh; hostile bodies; tiles showing their cell's latest run after a Run all with a
parameter (a real kernel); a deleted cell's tile; and the dashboard through a read-only link."""
from __future__ import annotations

import time
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from security_support import login

CELLS = [{"kind": "mlsql", "source": 'set n = "3" where type="defaultParam";'},
         {"kind": "mlsql", "source": "select 'a' as k, ${n} as v union all select 'b' as k, ${n} * 2 as v as t;"},
         {"kind": "markdown", "source": "# notes"}]


def _notebook(app: Flask) -> tuple[FlaskClient, str, list[str]]:
    """alice's notebook; vera a viewer, rudy a runner, eddie an editor, rita (a reader) a viewer share."""
    alice = login(app, "alice")
    r = alice.post("/api/notebooks", json={"name": "sales", "cells": CELLS})
    assert r.status_code == 201, r.json
    nb = r.json["id"]
    for user, role in (("vera", "viewer"), ("rudy", "runner"), ("eddie", "editor"), ("rita", "viewer")):
        assert alice.post(f"/api/notebooks/{nb}/shares", json={"user": user, "role": role}).status_code == 201
    return alice, nb, [c["id"] for c in r.json["cells"]]


def _get(client: FlaskClient, nb: str) -> dict[str, Any]:
    r = client.get(f"/api/notebooks/{nb}/dashboard")
    assert r.status_code == 200, r.json
    return dict(r.json)


def _values(dash: dict[str, Any]) -> list[Any]:
    """The first tile's result rows, or None while its cell has no finished run."""
    run = dash["tiles"][0]["run"]
    return run["result"]["rows"] if run and run["status"] == "done" and run["result"] else []


def test_viewers_read_editors_pin_and_arrange_strangers_see_nothing(mu_app: Flask) -> None:
    alice, nb, (c0, c1, c2) = _notebook(mu_app)
    vera, rudy, eddie, rita, mallory = (login(mu_app, n) for n in ("vera", "rudy", "eddie", "rita", "mallory"))
    url = f"/api/notebooks/{nb}/dashboard"

    # A stranger learns nothing (404, as for a notebook that does not exist); nobody logged in: 401.
    assert mallory.get(url).status_code == 404
    assert mallory.post(f"{url}/tiles", json={"cell_id": c1, "kind": "chart"}).status_code == 404
    assert mu_app.test_client().get(url).status_code == 401
    assert mu_app.test_client().get(f"/d/{nb}").status_code == 302  # the page sends to the login

    empty = _get(vera, nb)
    assert empty["tiles"] == [] and empty["revision"] == 0 and empty["name"] == "sales"
    assert (empty["can_edit"], empty["can_run"]) == (False, False)
    assert empty["params"] == [{"name": "n", "default": "3"}]
    assert (_get(rudy, nb)["can_edit"], _get(rudy, nb)["can_run"]) == (False, True)
    assert (_get(rita, nb)["can_edit"], _get(rita, nb)["can_run"]) == (False, False)  # a reader: at most a viewer

    # Pinning is an editor's: viewers, runners and a reader are refused.
    for client in (vera, rudy, rita):
        assert client.post(f"{url}/tiles", json={"cell_id": c1, "kind": "chart"}).status_code == 403
        assert client.put(url, json={"tiles": []}).status_code == 403
    r = eddie.post(f"{url}/tiles", json={"cell_id": c1, "kind": "chart"})
    assert r.status_code == 201 and r.json["revision"] == 1, r.json
    tile = r.json["tiles"][0]
    assert (tile["cell_id"], tile["kind"], tile["width"], tile["height"]) == (c1, "chart", 2, 2)
    assert tile["cell"]["position"] == 2 and tile["cell"]["title"].startswith("cell 2 (select") and tile["run"] is None
    r = eddie.post(f"{url}/tiles", json={"cell_id": c1, "kind": "chart", "width": 4})  # pinned already
    assert r.status_code == 200 and r.json["revision"] == 1 and r.json["tiles"][0]["width"] == 2
    r = alice.post(f"{url}/tiles", json={"cell_id": c2, "kind": "result", "width": 1, "height": 1})
    assert r.status_code == 201 and r.json["revision"] == 2

    # Arranging is a PUT of the whole list; a stale base_revision is a 409 and changes nothing.
    arranged = [{"cell_id": c2, "kind": "result", "width": 4, "height": 1},
                {"cell_id": c1, "kind": "chart", "width": 3, "height": 3}]
    r = eddie.put(url, json={"tiles": arranged, "base_revision": 2})
    assert r.status_code == 200 and r.json["revision"] == 3, r.json
    assert [{k: t[k] for k in ("cell_id", "kind", "width", "height")} for t in _get(vera, nb)["tiles"]] == arranged
    r = alice.put(url, json={"tiles": [], "base_revision": 2})
    assert r.status_code == 409 and r.json["current_revision"] == 3, r.json
    assert len(_get(vera, nb)["tiles"]) == 2

    # Unpinning: an editor's, and a tile the dashboard does not have is a 404.
    assert vera.delete(f"{url}/tiles/result/{c2}").status_code == 403
    r = eddie.delete(f"{url}/tiles/result/{c2}")
    assert r.status_code == 200 and [t["cell_id"] for t in r.json["tiles"]] == [c1]
    assert eddie.delete(f"{url}/tiles/result/{c2}").status_code == 404
    assert eddie.delete(f"{url}/tiles/table/{c1}").status_code == 404
    # The page itself: the single page, for whoever logs in (its data is the rows above).
    assert vera.get(f"/d/{nb}").status_code == 200


def test_a_cell_id_of_another_notebook_is_no_tile_here(mu_app: Flask) -> None:
    alice, nb, (c0, c1, _) = _notebook(mu_app)
    mallory = login(mu_app, "mallory")
    r = mallory.post("/api/notebooks", json={"name": "mine", "cells": [{"kind": "mlsql", "source": "select 2;"}]})
    own = r.json["id"]
    r = mallory.post(f"/api/notebooks/{own}/dashboard/tiles", json={"cell_id": c1, "kind": "chart"})
    assert r.status_code == 404, r.json
    r = mallory.put(f"/api/notebooks/{own}/dashboard", json={"tiles": [{"cell_id": c1, "kind": "chart"}]})
    assert r.status_code == 404, r.json
    assert _get(alice, nb)["tiles"] == []


def test_hostile_bodies_are_400s_naming_the_field(mu_app: Flask) -> None:
    alice, nb, (c0, c1, _) = _notebook(mu_app)
    url = f"/api/notebooks/{nb}/dashboard"
    ok = {"cell_id": c1, "kind": "chart"}
    cases: list[tuple[str, str, Any, str]] = [
        ("POST", f"{url}/tiles", {"kind": "chart"}, "'cell_id' is required"),
        ("POST", f"{url}/tiles", {"cell_id": 7, "kind": "chart"}, "'cell_id' must be a string"),
        ("POST", f"{url}/tiles", {"cell_id": "../etc", "kind": "chart"}, "'cell_id' is not a cell id"),
        ("POST", f"{url}/tiles", {"cell_id": "x" * 33, "kind": "chart"}, "'cell_id' is not a cell id"),
        ("POST", f"{url}/tiles", {"cell_id": c1, "kind": "table"}, "'kind' must be one of result, chart"),
        ("POST", f"{url}/tiles", {"cell_id": c1}, "'kind' is required"),
        ("POST", f"{url}/tiles", {**ok, "width": 0}, "'width' must be 1 to 4"),
        ("POST", f"{url}/tiles", {**ok, "width": 5}, "'width' must be 1 to 4"),
        ("POST", f"{url}/tiles", {**ok, "width": "2"}, "'width' must be an integer"),
        ("POST", f"{url}/tiles", {**ok, "width": True}, "'width' must be an integer"),
        ("POST", f"{url}/tiles", {**ok, "height": 4}, "'height' must be 1 to 3"),
        ("POST", f"{url}/tiles", {**ok, "height": 2 ** 70}, "64-bit"),
        ("POST", f"{url}/tiles", {**ok, "notebook_id": "other"},
         "unknown field notebook_id; this body takes cell_id, kind, width, height"),
        ("POST", f"{url}/tiles", [ok], "JSON object"),
        ("PUT", url, {}, "'tiles' is required"),
        ("PUT", url, {"tiles": ok}, "'tiles' must be a list"),
        ("PUT", url, {"tiles": [ok, "x"]}, "'tiles[1]' must be an object"),
        ("PUT", url, {"tiles": [ok, {**ok, "width": 9}]}, "'tiles[1].width' must be 1 to 4"),
        ("PUT", url, {"tiles": [{**ok, "kind": "pie"}]}, "'tiles[0].kind' must be one of"),
        ("PUT", url, {"tiles": [{"kind": "chart"}]}, "'tiles[0].cell_id' is required"),
        ("PUT", url, {"tiles": [{**ok, "html": "<b>"}]},
         "unknown field tiles[0].html; tiles[0] takes cell_id, kind, width, height"),
        ("PUT", url, {"tiles": [ok, ok]}, "'tiles[1]': that cell's chart is on the dashboard already"),
        ("PUT", url, {"tiles": [ok] * 49}, "at most 48"),
        ("PUT", url, {"tiles": [], "base_revision": "0"}, "'base_revision' must be an integer"),
        ("PUT", url, {"tiles": [], "layout": "grid"}, "unknown field layout; this body takes tiles, base_revision"),
    ]
    for method, target, body, says in cases:
        r = alice.open(target, method=method, json=body)
        assert r.status_code == 400 and says in r.json["error"], (method, body if len(str(body)) < 300 else "…", r.json)
    assert _get(alice, nb)["revision"] == 0  # nothing was written
    r = alice.open(url, method="PUT", data="{not json", content_type="application/json")
    assert r.status_code == 400


def test_a_hostile_tile_deep_in_a_put_is_a_400_with_its_path(mu_app: Flask) -> None:
    """PUT's tiles are decoded by the same typed body as POST's (TileBody, through body_as): a wrong
    type, a null, a nested object or an unknown field inside the third tile names `tiles[2]...`."""
    alice, nb, (c0, c1, c2) = _notebook(mu_app)
    url = f"/api/notebooks/{nb}/dashboard"
    good = [{"cell_id": c0, "kind": "result"}, {"cell_id": c1, "kind": "chart"}]
    cases: list[tuple[Any, str]] = [
        ({"cell_id": c2, "kind": "result", "width": "3"}, "'tiles[2].width' must be an integer"),
        ({"cell_id": c2, "kind": "result", "width": 2.5}, "'tiles[2].width' must be an integer"),
        ({"cell_id": c2, "kind": "result", "height": [1]}, "'tiles[2].height' must be an integer"),
        ({"cell_id": c2, "kind": "result", "height": False}, "'tiles[2].height' must be an integer"),
        ({"cell_id": {"$ne": ""}, "kind": "result"}, "'tiles[2].cell_id' must be a string"),
        ({"cell_id": c2, "kind": ["result"]}, "'tiles[2].kind' must be one of result, chart"),
        ({"cell_id": c2, "kind": "result", "width": 0}, "'tiles[2].width' must be 1 to 4"),
        ({"cell_id": "<img src=x>", "kind": "result"}, "'tiles[2].cell_id' is not a cell id"),
        ({"cell_id": c2, "kind": "result", "__proto__": {"admin": True}},
         "unknown field tiles[2].__proto__; tiles[2] takes cell_id, kind, width, height"),
        ({"cell_id": c2}, "'tiles[2].kind' is required"),
        (None, "'tiles[2]' must be an object {cell_id, kind, width, height}"),
        ([c2, "result"], "'tiles[2]' must be an object"),
    ]
    for tile, says in cases:
        r = alice.put(url, json={"tiles": [*good, tile], "base_revision": 0})
        assert r.status_code == 400 and r.json["error"].startswith(says), (tile, r.json)
    assert _get(alice, nb)["revision"] == 0  # nothing was written
    r = alice.put(url, json={"tiles": [*good, {"cell_id": c2, "kind": "result", "width": 4, "height": 1}],
                             "base_revision": 0})
    assert r.status_code == 200, r.json
    assert [(t["cell_id"], t["width"], t["height"]) for t in r.json["tiles"]] == [(c0, 2, 2), (c1, 2, 2), (c2, 4, 1)]


@pytest.mark.timeout(180)
def test_tiles_show_the_latest_run_a_runner_refreshes_with_a_parameter(mu_app: Flask) -> None:
    alice, nb, (c0, c1, c2) = _notebook(mu_app)
    vera, rudy = login(mu_app, "vera"), login(mu_app, "rudy")
    assert alice.post(f"/api/notebooks/{nb}/dashboard/tiles", json={"cell_id": c1, "kind": "chart"}).status_code == 201
    run = f"/api/notebooks/{nb}/run"
    # Refresh is the run endpoint with the dashboard's values: a viewer may not; a bad value is a 400.
    assert vera.post(run, json={"all": True, "params": {"n": "5"}}).status_code == 403
    r = rudy.post(run, json={"all": True, "params": {"n": "1 or 1=1"}})
    assert r.status_code == 400 and "parameter n" in r.json["error"], r.json

    def refreshed(client: FlaskClient, params: dict[str, str], want: list[Any]) -> dict[str, Any]:
        r = client.post(run, json={"all": True, "params": params})
        assert r.status_code == 202, r.json
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            dash = _get(vera, nb)  # a viewer reads what the runner's run left
            if not dash["running"] and _values(dash) == want:
                return dash
            time.sleep(0.3)
        raise AssertionError(f"the tile never showed {want}: {_get(vera, nb)['tiles']}")

    dash = refreshed(rudy, {"n": "5"}, [["a", 5], ["b", 10]])
    tile = dash["tiles"][0]
    assert tile["run"]["result"]["columns"][1]["name"] == "v"
    assert "run_id" not in tile["run"]["result"] and "cell_id" not in tile["run"]["result"]
    refreshed(alice, {"n": "7"}, [["a", 7], ["b", 14]])

    # The dashboard through a read-only link: the same tiles, nothing that runs, a revoked link 404s.
    token = alice.post(f"/api/notebooks/{nb}/links").json["token"]
    anon = mu_app.test_client()
    r = anon.get(f"/api/links/{token}/dashboard")
    assert r.status_code == 200 and _values(r.json) == [["a", 7], ["b", 14]], r.json
    assert (r.json["can_edit"], r.json["can_run"], r.json["params"], r.json["notebook_id"]) == (False, False, [], None)
    page = anon.get(f"/p/{token}/dashboard")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert alice.delete(f"/api/notebooks/{nb}/links/{token}").status_code == 200
    assert anon.get(f"/api/links/{token}/dashboard").status_code == 404
    assert anon.get(f"/p/{token}/dashboard").status_code == 404


def test_a_deleted_cells_tile_says_so_and_can_be_unpinned(mu_app: Flask) -> None:
    alice, nb, (c0, c1, c2) = _notebook(mu_app)
    url = f"/api/notebooks/{nb}/dashboard"
    alice.post(f"{url}/tiles", json={"cell_id": c2, "kind": "result"})
    rev = alice.get(f"/api/notebooks/{nb}").json["revision"]
    assert alice.delete(f"/api/notebooks/{nb}/cells/{c2}?base_revision={rev}").status_code == 200
    (tile,) = _get(alice, nb)["tiles"]
    assert tile["cell_id"] == c2 and tile["cell"] is None and tile["run"] is None
    r = alice.put(url, json={"tiles": [{"cell_id": c2, "kind": "result", "width": 4}]})  # may stay and be resized
    assert r.status_code == 200, r.json
    assert alice.post(f"{url}/tiles", json={"cell_id": c2, "kind": "chart"}).status_code == 404  # not pinned anew
    assert alice.delete(f"{url}/tiles/result/{c2}").status_code == 200
