"""A cell's whole result over HTTP (pages, sort, CSV/Parquet downloads) and the cell's saved view.

Result endpoints run against a live server whose kernels run the real engine; the view endpoints
need no kernel and use the plain test client.
"""
from __future__ import annotations

import csv
import io
import json
import os
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from flask.testing import FlaskClient

from console.cluster.sandbox import session_cache_dir
from console.server.api import results as results_api
from console.server.errors import ApiError
from console.server.sessions.kernels import KernelSession
from tests.support.clients import TEST_USER_HEADER, http, live_server_fixture, run_cell_and_wait
from tests.support.live_server import LiveServer

SQL = "select id, id % 7 as k, 'r' || id as s from range(10000) t(id) as big;"


live = live_server_fixture("results-data")



def _get(live: LiveServer, path: str, user: str | None = None) -> tuple[int, bytes, dict[str, str]]:
    req = urllib.request.Request(live.url + path, headers={TEST_USER_HEADER: user} if user else {})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def _sort(*pairs: tuple[str, str]) -> str:
    return urllib.parse.quote(json.dumps([list(p) for p in pairs]))


@pytest.fixture(scope="module")
def ran(live: LiveServer) -> Any:
    nb = live.notebook(SQL, "select 1 as one;")
    run_cell_and_wait(live, nb, nb.cells[0].id)
    return nb


def test_page_anywhere_in_the_whole_result_sorted(live: LiveServer, ran: Any) -> None:
    base = f"/api/notebooks/{ran.id}/cells/{ran.cells[0].id}/result"
    status, page = http(live, "GET", f"{base}?offset=5000&limit=20&sort={_sort(('k', 'desc'), ('id', 'asc'))}")
    assert status == 200, page
    assert page["total_rows"] == 10000 and page["offset"] == 5000 and len(page["rows"]) == 20
    assert [c["name"] for c in page["columns"]] == ["id", "k", "s"]
    # 1,428 or 1,429 rows per k: rows 5000.. are k=3 (after 6, 5, 4 with 1428 each = 4284 rows).
    expected = [i for i in range(10000) if i % 7 == 3][5000 - 4284:5000 - 4284 + 20]
    assert [r[0] for r in page["rows"]] == expected and {r[1] for r in page["rows"]} == {3}
    status, tail = http(live, "GET", f"{base}?offset=9995&limit=100")
    assert status == 200 and [r[0] for r in tail["rows"]] == [9995, 9996, 9997, 9998, 9999]


def test_page_refusals_say_what_is_wrong(live: LiveServer, ran: Any) -> None:
    base = f"/api/notebooks/{ran.id}/cells/{ran.cells[0].id}/result"
    assert http(live, "GET", f"{base}?limit=10001")[0] == 400
    assert http(live, "GET", f"{base}?offset=-1")[0] == 400
    status, body = http(live, "GET", f"{base}?sort=%5B%5B%22id%22%2C%22up%22%5D%5D")
    assert status == 400 and "asc" in body["error"]
    assert http(live, "GET", f"{base}?sort=not-json")[0] == 400
    status, body = http(live, "GET", f"{base}?sort={_sort(('nope', 'asc'))}")
    assert status == 400 and "no column 'nope'" in body["error"] and "id, k, s" in body["error"]
    # The second cell never ran: nothing kept, and the answer says what to do.
    status, body = http(live, "GET", f"/api/notebooks/{ran.id}/cells/{ran.cells[1].id}/result")
    assert status == 409 and "run the cell" in body["error"]


def test_results_are_the_notebook_kernels_for_its_runners(live: LiveServer, ran: Any) -> None:
    """A runner pages what the notebook's shared kernel holds; a viewer reads only the stored first
    rows (403); a stranger is not told it exists."""
    vera = live.store.ensure_user("vera-results")
    live.store.set_share(vera.id, "viewer", notebook_id=ran.id)
    path = f"/api/notebooks/{ran.id}/cells/{ran.cells[0].id}/result"
    status, body = http(live, "GET", path, user="vera-results")
    assert status == 403 and "runner" in body["error"], body
    assert _get(live, path + "/download/csv", user="vera-results")[0] == 403
    rudy = live.store.ensure_user("rudy-results")
    live.store.set_share(rudy.id, "runner", notebook_id=ran.id)
    status, body = http(live, "GET", path + "?limit=3", user="rudy-results")
    assert status == 200 and len(body["rows"]) == 3 and body["total_rows"] == 10000, body
    live.store.ensure_user("mallory-results")
    assert http(live, "GET", path, user="mallory-results")[0] == 404
    assert _get(live, path + "/download/csv", user="mallory-results")[0] == 404


def test_download_csv_and_parquet_hold_the_whole_result(live: LiveServer, ran: Any) -> None:
    base = f"/api/notebooks/{ran.id}/cells/{ran.cells[0].id}/result/download"
    status, raw, headers = _get(live, f"{base}/csv?sort={_sort(('id', 'desc'))}")
    assert status == 200, raw[:300]
    assert headers["Content-Type"].startswith("text/csv") and "big.csv" in headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(raw.decode())))
    assert rows[0] == ["id", "k", "s"] and len(rows) == 10001
    assert rows[1] == ["9999", str(9999 % 7), "r9999"] and rows[-1] == ["0", "0", "r0"]
    status, raw, headers = _get(live, f"{base}/parquet")
    assert status == 200 and headers["X-Result-Rows"] == "10000"
    table = pq.read_table(io.BytesIO(raw))
    assert table.num_rows == 10000 and table.column("s")[1234].as_py() == "r1234"
    # The server removed the kernel's files once it had them open.
    admin = live.store.get_user_by_name("admin")
    folder = session_cache_dir(Path(live.app.extensions["config"].data_dir),
                               KernelSession(admin.id, ran.id).session_id) / "downloads"
    assert not [p for p in folder.iterdir() if not p.name.endswith(".part")]
    assert _get(live, f"{base}/xlsx")[0] == 404


def test_download_never_follows_a_link_the_kernel_left(live: LiveServer, ran: Any) -> None:
    """The kernel is user code: a link at the download's name must not make the server send its key."""
    admin = live.store.get_user_by_name("admin")
    cfg = live.app.extensions["config"]
    folder = session_cache_dir(Path(cfg.data_dir), KernelSession(admin.id, ran.id).session_id) / "downloads"
    folder.mkdir(parents=True, exist_ok=True)
    secret = Path(cfg.data_dir) / "server" / "secret_key"
    name = "ab" * 16
    (folder / f"{name}.csv").symlink_to(secret)
    with live.app.test_request_context(headers={TEST_USER_HEADER: "admin"}):
        with pytest.raises(ApiError) as caught:
            results_api._open_download(ran.id, name, "csv")
    assert caught.value.status == 502
    (folder / f"{name}.csv").unlink()
    os.link(secret, folder / f"{name}.csv")  # a second name of the key: refused as well
    with live.app.test_request_context(headers={TEST_USER_HEADER: "admin"}):
        with pytest.raises(ApiError) as caught:
            results_api._open_download(ran.id, name, "csv")
    assert caught.value.status == 502 and secret.exists()


# ---------------------------------------------------------------- the cell's saved view

CHART = {"mode": "chart", "chart": {"type": "bar", "x": "k", "y": ["n"], "agg": "sum", "group": None}}


def _nb(client: FlaskClient) -> dict[str, Any]:
    r = client.post("/api/notebooks", json={"name": "v", "cells": [{"kind": "mlsql", "source": "select 1;"}]})
    return r.json  # type: ignore[no-any-return]


def test_view_is_saved_with_the_cell_and_kept_by_source_edits(client: FlaskClient) -> None:
    nb = _nb(client)
    url = f"/api/notebooks/{nb['id']}/cells/{nb['cells'][0]['id']}"
    r = client.patch(url, json={"base_revision": 1, "view": CHART})
    assert r.status_code == 200 and r.json["revision"] == 2 and r.json["cells"][0]["view"] == CHART
    r = client.patch(url, json={"base_revision": 2, "source": "select 2;"})
    assert r.json["cells"][0]["view"] == CHART  # editing the source keeps the chart
    r = client.put(f"/api/notebooks/{nb['id']}", json={"base_revision": 3, "cells": [
        {"id": nb["cells"][0]["id"], "kind": "mlsql", "source": "select 3;"}]})
    assert r.status_code == 200 and r.json["cells"][0]["view"] == CHART
    r = client.patch(url, json={"base_revision": 4, "source": "select 4;", "view": None})
    assert r.status_code == 200 and r.json["cells"][0]["view"] is None and r.json["cells"][0]["source"] == "select 4;"
    assert client.get(f"/api/notebooks/{nb['id']}").json["cells"][0]["view"] is None


@pytest.mark.parametrize(("view", "message"), [
    ({"mode": "chart", "chart": {"type": "bars"}}, "view.chart.type must be one of bar, line, area, scatter, pie"),
    ({"mode": "grid"}, "view.mode must be one of table, chart"),
    ({"mode": "chart"}, "view.chart is required"),
    ({"mode": "table", "colour": "red"}, "unknown key 'colour'"),
    ({"mode": "chart", "chart": {"type": "bar", "y": ["a"] * 17}}, "at most 16"),
    ({"mode": "chart", "chart": {"type": "bar", "x": 3}}, "view.chart.x must be a column name"),
    ({"mode": "chart", "chart": {"type": "bar", "agg": "median"}}, "view.chart.agg must be one of"),
    ({"mode": "chart", "chart": {"type": "bar", "x": "x" * 5000}}, "larger than 4096 bytes"),
    ("chart", "must be an object or null"),
])
def test_bad_views_are_refused_with_the_reason(client: FlaskClient, view: Any, message: str) -> None:
    nb = _nb(client)
    r = client.patch(f"/api/notebooks/{nb['id']}/cells/{nb['cells'][0]['id']}", json={"base_revision": 1, "view": view})
    assert r.status_code == 400 and message in r.json["error"], r.json
    assert client.get(f"/api/notebooks/{nb['id']}").json["revision"] == 1


def test_export_and_import_keep_the_view(client: FlaskClient) -> None:
    nb = _nb(client)
    client.patch(f"/api/notebooks/{nb['id']}/cells/{nb['cells'][0]['id']}", json={"base_revision": 1, "view": CHART})
    data = client.get(f"/api/notebooks/{nb['id']}/export").json
    assert data["cells"][0]["view"] == CHART
    r = client.post("/api/notebooks/import", json=data)
    assert r.status_code == 201 and r.json["cells"][0]["view"] == CHART
    data["cells"][0]["view"] = {"mode": "chart", "chart": {"type": "donut"}}
    r = client.post("/api/notebooks/import", json=data)
    assert r.status_code == 400 and "cell 1: view.chart.type" in r.json["error"]
    # Restoring a revision brings its view back.
    r = client.post(f"/api/notebooks/{nb['id']}/revisions/1/restore", json={"base_revision": 2})
    assert r.status_code == 200 and r.json["cells"][0]["view"] is None
