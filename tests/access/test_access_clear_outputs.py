"""Clear outputs deletes what every viewer of a notebook sees, so it needs an editor: a viewer or a
runner is refused and the stored runs stay."""
from __future__ import annotations

from typing import Any

from flask import Flask


def test_only_an_editor_clears_outputs(mu_app: Flask, as_user: Any) -> None:
    store = mu_app.extensions["store"]
    users = {u.username: u for u in store.list_users()}
    nb = store.create_notebook("shared", "/", owner_id=users["alice"].id,
                               cells=[{"kind": "mlsql", "source": "select 1 as a;"}])
    cell = nb.cells[0].id
    for name, role in (("vera", "viewer"), ("rudy", "runner"), ("eddie", "editor")):
        store.set_share(users[name].id, role, notebook_id=nb.id)
    run = store.create_run(nb.id, cell, "select 1 as a;", users["alice"].id)
    store.append_output(run.id, [{"seq": 1, "text": "hello\n"}])
    store.finish_run(run.id, "done")
    url = f"/api/notebooks/{nb.id}/outputs/clear"
    # A caller with no role is not told the notebook exists (404); a weaker role is refused (403).
    for name, status in (("vera", 403), ("rudy", 403), ("mallory", 404)):
        r = as_user(name).post(url, json={"cell_id": cell})
        assert r.status_code == status, (name, r.status_code, r.json)
        assert cell in store.latest_runs(nb.id, with_outputs=False), name
    assert mu_app.test_client().post(url, json={"all": True}).status_code == 401
    r = as_user("eddie").post(url, json={"cell_id": cell})
    assert r.status_code == 200 and r.json["cleared"] == [cell]
    assert store.latest_runs(nb.id, with_outputs=False) == {}
