"""Completion and hover over HTTP, answered by the caller's own kernel; API answers are never cached."""
from __future__ import annotations



from tests.support.clients import http, live_server_fixture, run_cell_and_wait
from tests.support.live_server import LiveServer


live = live_server_fixture("complete-data")



def test_a_column_of_a_table_from_an_earlier_cell_is_offered(live: LiveServer) -> None:
    nb = live.notebook("select 1 as customer_id, 'x' as customer_name as clients;", "select cus")
    path = f"/api/notebooks/{nb.id}/complete"
    # Before any run there is no kernel: no items, and the page offers its own keywords.
    status, body = http(live, "POST", path, {"source": "select cus", "cursor": 10})
    assert status == 200 and body["kernel"] is False and body["items"] == []
    run_cell_and_wait(live, nb, nb.cells[0].id)
    status, body = http(live, "POST", path, {"source": "select cus from clients", "cursor": 10})
    assert status == 200, body
    assert body["kernel"] is True and (body["from"], body["to"]) == (7, 10)
    assert [i["label"] for i in body["items"]][:2] == ["customer_id", "customer_name"]
    status, body = http(live, "GET", f"/api/notebooks/{nb.id}/inspect?name=clients")
    assert status == 200 and body["columns"][1] == {"name": "customer_name", "type": "string"}
    status, body = http(live, "GET", f"/api/notebooks/{nb.id}/inspect?name=nope")
    assert status == 409 and "clients" in body["error"]


def test_bad_requests_and_refusals(live: LiveServer) -> None:
    nb = live.notebook("select 1 as a as t;")
    path = f"/api/notebooks/{nb.id}/complete"
    status, body = http(live, "POST", path, {"source": "sel", "cursor": 9})
    assert status == 400 and "between 0 and 3" in body["error"]
    status, body = http(live, "POST", path, {"source": "sel", "kind": "scala"})
    assert status == 400 and "mlsql, python or sql" in body["error"]
    assert http(live, "GET", f"/api/notebooks/{nb.id}/inspect")[0] == 400
    # A viewer has no kernel of its own to ask; a stranger is not told the notebook exists.
    viewer = live.store.ensure_user("vic-complete")
    live.store.set_share(viewer.id, "viewer", notebook_id=nb.id)
    assert http(live, "POST", path, {"source": "sel"}, user="vic-complete")[0] == 403
    live.store.ensure_user("stranger-complete")
    assert http(live, "POST", path, {"source": "sel"}, user="stranger-complete")[0] == 404


def test_api_answers_are_never_cached(live: LiveServer) -> None:
    import urllib.request

    nb = live.notebook("select 1 as a as t;")
    with urllib.request.urlopen(live.url + f"/api/notebooks/{nb.id}", timeout=30) as resp:
        assert resp.headers["Cache-Control"] == "no-store"
