"""Run all and run-from-here stop at the first cell that fails, as Jupyter and Databricks do."""
from __future__ import annotations


from tests.support.clients import http, live_server_fixture, runs_ended as ended
from tests.support.live_server import LiveServer

live = live_server_fixture("run-all-data")


def test_run_all_stops_at_the_first_failure_and_says_why(live: LiveServer) -> None:
    nb = live.notebook("select 1 as a as first;", "select * from no_such_table as broken;",
                       "select 3 as c as third;", "select 4 as d as fourth;")
    status, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True})
    assert status == 202, body
    runs = ended(live, body["run_ids"])
    assert [r.status for r in runs] == ["done", "error", "cancelled", "cancelled"]
    for run in runs[2:]:
        assert "Run all stops at the first failure" in run.error["message"]
    # One cell on its own is run whatever failed before it.
    status, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": nb.cells[2].id})
    assert [r.status for r in ended(live, body["run_ids"])] == ["done"]


def test_run_from_here_stops_too_and_a_later_run_all_starts_afresh(live: LiveServer) -> None:
    nb = live.notebook("select 1 as a as t;", "select nope from t as bad;", "select 2 as b as after;")
    status, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"from": nb.cells[1].id})
    assert status == 202, body
    assert [r.status for r in ended(live, body["run_ids"])] == ["error", "cancelled"]
    # Two Run alls queued back to back: the first one's failure cancels only its own cells.
    first = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True})[1]["run_ids"]
    second = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": nb.cells[2].id})[1]["run_ids"]
    assert [r.status for r in ended(live, first)] == ["done", "error", "cancelled"]
    assert [r.status for r in ended(live, second)] == ["done"]


def test_the_run_body_is_typed(live: LiveServer) -> None:
    nb = live.notebook("select 1 as a as t;")
    url = f"/api/notebooks/{nb.id}/run"
    assert http(live, "POST", url, {"cell": nb.cells[0].id}) == (
        400, {"error": "unknown field cell; this body takes cell_id, from, all, params", "status": 400})
    status, body = http(live, "POST", url, {"from": 3})
    assert status == 400 and body["error"] == "'from' must be a string", body
    status, body = http(live, "POST", url, {"all": "yes"})
    assert status == 400 and body["error"] == "'all' must be true or false", body
    status, body = http(live, "POST", url, {})
    assert status == 400 and body["error"] == "give 'cell_id', 'from' (a cell id) or 'all': true", body
