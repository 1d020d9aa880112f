"""History that means something: saves without a history row settle into one revision with all
their authors, a run or a named version makes one at once, any two revisions diff with cells named
by position and first line, and a restore keeps unsettled edits as a revision of their own."""
from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from console.clock import MovableClock
from console.store import Store
from console.store.models import utcnow
from console.server.live.history import SETTLER_KEY, stop_settler

SETTLE = 30.0  # the default idle time, simulated below through settle_notebooks(now=...)


def _later(seconds: float) -> Any:
    return utcnow() + timedelta(seconds=seconds)


def test_a_three_minute_editing_session_makes_a_handful_of_revisions(app: Flask) -> None:
    """Two people type for three minutes in bursts, the co-editing way (a save every second
    without a history row), with the settler looking every 7.5 s and two pauses to think. The
    clock is simulated: the settler is asked as if that much time had passed since the last save."""
    store: Store = app.extensions["store"]
    ann, bob = store.create_user("ann"), store.create_user("bob")
    nb = store.create_notebook("session", owner_id=ann.id, cells=[{"kind": "mlsql", "source": ""}])
    cid, rev = nb.cells[0].id, nb.revision
    text = ""
    made = []
    # Three bursts of about a minute each: 60 saves, a settler look every 7.5 saves.
    for burst in range(3):
        for second in range(60):
            text += f"-- line {burst}.{second}\n"
            who = ann if second % 2 else bob
            rev = store.update_notebook(nb.id, rev, cells=[{"id": cid, "kind": "mlsql", "source": text}],
                                       author_id=who.id, snapshot=False).revision
            if second % 8 == 7:  # mid-burst: the last save is a second old, far from settled
                made += store.settle_notebooks(SETTLE, now=_later(1))
        made += store.settle_notebooks(SETTLE, now=_later(SETTLE + 1))  # the pause to think
    assert rev == 181  # every save counted a revision number (a stale REST write still gets its 409)
    assert len(made) == 3
    revs = store.list_revisions(nb.id)
    assert [r.number for r in revs] == [181, 121, 61, 1]
    assert all(set(r.authors) == {ann.id, bob.id} for r in revs[:3])
    assert store.get_revision(nb.id, 181).snapshot["cells"][0]["source"] == text
    # Nothing is pending any more: another round of the settler makes nothing.
    assert store.settle_notebooks(SETTLE, now=_later(SETTLE + 60)) == []
    assert store.unsettled_notebooks(0) == []


def test_the_server_settles_idle_edits_by_itself(cfg: Any, tmp_path: Any) -> None:
    from console.server import create_app

    clock = MovableClock()  # the settler reads the app's clock: the test moves it past the idle time
    app = create_app({**cfg, "TESTING": True, "CLOCK": clock, "HISTORY_SETTLE_SECONDS": 2})
    try:
        store: Store = app.extensions["store"]
        client = app.test_client()
        nb = client.post("/api/notebooks", json={"name": "n", "cells": [{"kind": "mlsql", "source": "a"}]}).json
        admin = store.get_user_by_name("admin")
        rev = nb["revision"]
        for i in range(5):
            rev = store.update_notebook(nb["id"], rev, cells=[{"id": nb["cells"][0]["id"], "kind": "mlsql",
                                                               "source": "a" * (i + 2)}],
                                        author_id=admin.id, snapshot=False).revision
        settler = app.extensions[SETTLER_KEY]  # started by the first request above, a round each 0.5 s
        assert settler.every == 0.5 and settler.settle_once() == 0  # no idle time passed on the app's clock
        clock.advance(120)  # past the idle time of edits made since the clock was set: its next round settles
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and store.unsettled_notebooks(0):
            time.sleep(0.05)
        revs = client.get(f"/api/notebooks/{nb['id']}/revisions").json["revisions"]
        assert [(r["number"], r["authors"], r["label"]) for r in revs] == [(6, ["admin"], None), (1, ["admin"], None)]
    finally:
        stop_settler(app)
        app.extensions["store"].close()


def _typed(store: Store, nb_id: str, cell_id: str, source: str, author: int) -> int:
    """A co-editing save of one cell's source (the others as they are), without a history row."""
    nb = store.get_notebook(nb_id)
    cells = [{"id": c.id, "kind": c.kind, "source": source if c.id == cell_id else c.source} for c in nb.cells]
    return store.update_notebook(nb_id, nb.revision, cells=cells, author_id=author, snapshot=False).revision


def test_named_versions_and_the_diff_of_two_old_revisions(client: FlaskClient, app: Flask) -> None:
    store: Store = app.extensions["store"]
    admin = store.get_user_by_name("admin")
    nb = client.post("/api/notebooks", json={"name": "n", "cells": [
        {"kind": "mlsql", "source": "select 1 as a;\nselect 2 as b;"}, {"kind": "markdown", "source": "# notes"}]}).json
    url = f"/api/notebooks/{nb['id']}/revisions"
    c0, c1 = (c["id"] for c in nb["cells"])
    _typed(store, nb["id"], c0, "select 1 as a;\nselect 3 as b;", admin.id)
    r = client.post(url, json={"label": "  first draft "})
    assert r.status_code == 201 and r.json["number"] == 2 and r.json["label"] == "first draft"
    # Naming the same content again renames the version; no second row.
    assert client.post(url, json={"label": "draft one"}).json["number"] == 2
    assert client.post(url, json={"label": " "}).status_code == 400
    assert client.post(url, json={"label": "x" * 201}).status_code == 400
    # A cell added at the top, then an unnamed version (what a run makes).
    rev = store.get_notebook_info(nb["id"]).revision
    store.add_cell(nb["id"], rev, kind="python", source="\n\nprint('top')\nmore", position=0, author_id=admin.id)
    _typed_first = store.get_notebook(nb["id"]).cells
    assert client.post(url).json["label"] is None
    current = client.post(url, json={"label": "later"}).json["number"]
    assert current == 3  # the add made revision 3 with its history row; naming it adds none
    revs = client.get(url).json["revisions"]
    assert [(r["number"], r["label"]) for r in revs] == [(3, "later"), (2, "draft one"), (1, None)]
    # Two old revisions, neither the current one once more typing happens.
    _typed(store, nb["id"], _typed_first[1].id, "select 9;", admin.id)
    diff = client.get(f"{url}/diff?from=1&to=3").json
    assert diff["from"] == 1 and diff["to"] == 3 and diff["label"] == {"from": None, "to": "later"}
    by_id = {c["id"]: c for c in diff["cells"]}
    assert by_id[c0]["status"] == "changed" and by_id[c0]["position"] == 2 and by_id[c0]["moved_from"] == 1
    assert by_id[c0]["title"] == "cell 2 (mlsql): select 1 as a;"
    assert "-select 2 as b;" in by_id[c0]["diff"] and "+select 3 as b;" in by_id[c0]["diff"]
    added = [c for c in diff["cells"] if c["status"] == "added"]
    assert [(c["position"], c["title"]) for c in added] == [(1, "cell 1 (python): print('top')")]
    assert by_id[c1]["status"] == "same" and by_id[c1]["title"] == "cell 3 (markdown): # notes"
    # Without `to`: the current content, newer than any history row while typing has not settled.
    live = client.get(f"{url}/diff?from=3").json
    assert live["to"] == 4 and [c["status"] for c in live["cells"]] == ["same", "changed", "same"]
    assert client.get(f"{url}/diff?from=1&to=4").status_code == 404  # 4 has no history row (yet)


def test_restore_keeps_unsettled_edits_as_a_revision(client: FlaskClient, app: Flask) -> None:
    store: Store = app.extensions["store"]
    admin = store.get_user_by_name("admin")
    nb = client.post("/api/notebooks", json={"name": "n", "cells": [{"kind": "mlsql", "source": "v1"}]}).json
    cid = nb["cells"][0]["id"]
    rev = _typed(store, nb["id"], cid, "v2 typed", admin.id)
    r = client.post(f"/api/notebooks/{nb['id']}/revisions/1/restore", json={"base_revision": rev})
    assert r.status_code == 200 and r.json["revision"] == rev + 1 and r.json["cells"][0]["source"] == "v1"
    revs = client.get(f"/api/notebooks/{nb['id']}/revisions").json["revisions"]
    assert [r["number"] for r in revs] == [rev + 1, rev, 1]
    assert client.get(f"/api/notebooks/{nb['id']}/revisions/{rev}").json["snapshot"]["cells"][0]["source"] == "v2 typed"


def test_the_settler_stops_with_its_store(cfg: Any) -> None:
    from console.server import create_app

    app = create_app({**cfg, "HISTORY_SETTLE_SECONDS": 0.4, "TESTING": True})
    app.test_client().get("/api/health")
    settler = app.extensions[SETTLER_KEY]
    assert settler._thread is not None and settler._thread.is_alive()
    app.extensions["store"].close()
    settler._thread.join(timeout=5)
    assert not settler._thread.is_alive()
