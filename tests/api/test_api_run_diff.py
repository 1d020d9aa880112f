"""What changed between two runs, through the real server and a real kernel (issue 32 item 4):
parameters, the revision's cells, the environment and the delta versions read and written, and only
for someone who may view both runs."""
from __future__ import annotations

from typing import Any

from tests.support.clients import http, live_server_fixture, runs_ended as ended
from tests.support.live_server import LiveServer

live = live_server_fixture("run-diff-data")


def run(live: LiveServer, nb: Any, cell: int, params: dict[str, str] | None = None) -> str:
    body: dict[str, Any] = {"cell_id": live.store.get_notebook(nb.id).cells[cell].id}
    if params:
        body["params"] = params
    status, answer = http(live, "POST", f"/api/notebooks/{nb.id}/run", body)
    assert status == 202, answer
    (r,) = ended(live, answer["run_ids"])
    assert r.status == "done", r.error
    return str(answer["run_ids"][0])


def diff(live: LiveServer, a: str, b: str, user: str | None = None) -> tuple[int, Any]:
    return http(live, "GET", f"/api/runs/{a}/diff/{b}", user=user)


def test_two_runs_side_by_side_say_what_changed_and_only_to_who_may_see_both(live: LiveServer) -> None:
    nb = live.notebook('set day = "monday" where type="defaultParam";\n'
                       "select 1 as a, '${day}' as day as t;\nsave overwrite t as delta.`rd.features`;",
                       "load delta.`rd.features` as f;\nselect count(*) as n from f as c;")
    monday, friday = run(live, nb, 0), run(live, nb, 0, {"day": "friday"})
    status, d = diff(live, monday, friday)
    assert status == 200, d
    assert d["comparable"] and not d["same"]
    assert d["params"] == [{"name": "day", "a": None, "b": "friday"}]  # the first ran with the default
    assert d["revision"]["same"] and d["environment"] == {"a": "", "b": "", "same": True}
    (out,) = d["outputs"]
    assert (out["name"], out["a"]["version"], out["b"]["version"], out["changed"]) == ("rd.features", 0, 1, True)

    reader = run(live, nb, 1)
    status, d = diff(live, reader, reader)
    assert status == 200 and d["same"], d

    # The reading cell edited (a new revision), run again after another write: both show.
    run(live, nb, 0, {"day": "sunday"})
    current = live.store.get_notebook(nb.id)
    live.store.edit_cell(nb.id, current.cells[1].id, current.revision,
                         source="load delta.`rd.features` as f;\nselect count(*) as rows from f as c;")
    again = run(live, nb, 1)
    status, d = diff(live, reader, again)
    assert status == 200 and not d["same"], d
    (cell,) = d["revision"]["cells"]
    assert cell["status"] == "changed" and "+select count(*) as rows from f as c;" in cell["diff"], cell
    (inp,) = d["inputs"]
    assert (inp["name"], inp["a"]["version"], inp["b"]["version"]) == ("rd.features", 1, 2), inp
    assert d["result"]["differs"] == ["columns"], d["result"]  # one row each, the count renamed

    # Another member sees neither run's notebook: the same answer as for runs that do not exist.
    live.store.ensure_user("eve")
    assert diff(live, reader, again, user="eve")[0] == 404
    # Shared one notebook but not the other's: still nothing of the second.
    hers = live.notebook("select 2 as b as u;", owner="eve")
    theirs = run(live, hers, 0)
    assert diff(live, theirs, again, user="eve")[0] == 404
    assert diff(live, again, theirs, user="eve")[0] == 404
    status, d = diff(live, theirs, theirs, user="eve")
    assert status == 200 and d["same"], d
