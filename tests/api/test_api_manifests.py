"""A run's manifest through the real server: what its cells read and wrote of real delta tables,
checked against the lake's own log, shown only to the notebook's viewers (issue 32)."""
from __future__ import annotations

from typing import Any

from tests.support.clients import http, live_server_fixture, runs_ended as ended
from tests.support.live_server import LiveServer

live = live_server_fixture("manifests-data")


def run(live: LiveServer, nb: Any, body: dict[str, Any]) -> list[str]:
    status, answer = http(live, "POST", f"/api/notebooks/{nb.id}/run", body)
    assert status == 202, answer
    runs = ended(live, answer["run_ids"])
    assert all(r.status == "done" for r in runs), [r.error for r in runs]
    return list(answer["run_ids"])


def manifest(live: LiveServer, run_id: str, user: str | None = None) -> dict[str, Any]:
    status, body = http(live, "GET", f"/api/runs/{run_id}/manifest", user=user)
    assert status == 200, body
    assert body["recorded"] is True, body
    return dict(body)


def entries(body: dict[str, Any], access: str) -> list[dict[str, Any]]:
    return [e for e in body["entries"] if e["access"] == access]


def test_a_run_names_the_delta_version_it_read_and_a_later_run_the_next_one(live: LiveServer) -> None:
    nb = live.notebook(
        'set day = "monday" where type="defaultParam";\n'
        "select 1 as a, '${day}' as day as t;\nsave overwrite t as delta.`mf.features`;",
        "load delta.`mf.features` as f;\nselect count(*) as n from f as c;",
        "save append t as delta.`mf.features`;\nsave overwrite t as csv.`mf_out/t.csv`;",
        "load csv.`mf_out/t.csv` as raw;")
    writer, reader = run(live, nb, {"cell_id": nb.cells[0].id, "params": {"day": "friday"}})[0], \
        run(live, nb, {"cell_id": nb.cells[1].id})[0]

    wrote = manifest(live, writer)
    assert wrote["params"] == {"day": "friday"} and wrote["revision"] == live.store.get_notebook(nb.id).revision
    (w,) = entries(wrote, "write")
    assert (w["format"], w["table"], w["version"], w["mode"], w["verified"]) == \
        ("delta", "mf.features", 0, "overwrite", True), w
    assert entries(wrote, "read") == []

    read = manifest(live, reader)
    (r,) = entries(read, "read")
    assert (r["path"], r["table"], r["version"], r["verified"]) == ("mf.features", "mf.features", 0, True), r
    assert "in the lake's log" in r["check"]
    assert read["params"] == {}

    # A second write makes v1; the same cell run again reads it, and says so.
    (appender,) = run(live, nb, {"cell_id": nb.cells[2].id})
    made = entries(manifest(live, appender), "write")
    assert [(e["format"], e.get("version"), e["mode"], e["verified"]) for e in made] == \
        [("delta", 1, "append", True), ("csv", None, "overwrite", False)], made
    (again,) = run(live, nb, {"cell_id": nb.cells[1].id})
    (r1,) = entries(manifest(live, again), "read")
    assert (r1["version"], r1["verified"]) == (1, True), r1

    # A plain file input: its size, modification time and a digest of its first bytes, kept as reported.
    (raw,) = run(live, nb, {"cell_id": nb.cells[3].id})
    (f,) = entries(manifest(live, raw), "read")
    assert f["format"] == "csv" and f["size"] > 0 and f["digest"].startswith("sha256:") and f["verified"] is False
    assert "mtime" in f and "files" in f

    # Lineage: which runs wrote and read each version.
    status, lineage = http(live, "GET", "/api/lineage?table=mf.features")
    assert status == 200, lineage
    by_version = {v["version"]: v for v in lineage["versions"]}
    assert [x["run_id"] for x in by_version[0]["writes"]] == [writer]
    assert [x["run_id"] for x in by_version[0]["reads"]] == [reader]
    assert [x["run_id"] for x in by_version[1]["writes"]] == [appender]
    assert [x["run_id"] for x in by_version[1]["reads"]] == [again]


def test_run_all_keeps_a_manifest_for_every_run_even_one_that_touched_no_data(live: LiveServer) -> None:
    nb = live.notebook("select 1 as a as one;", "select 2 as b as two;")
    for run_id in run(live, nb, {"all": True}):
        body = manifest(live, run_id)
        assert body["entries"] == [] and body["dropped"] == 0 and body["revision"] is not None


def test_only_the_notebooks_viewers_see_a_manifest(live: LiveServer) -> None:
    owner = "mf-owner"
    nb = live.notebook("select 1 as a as t;", owner=owner)
    (run_id,) = run(live, nb, {"cell_id": nb.cells[0].id})
    stranger_run = http(live, "GET", f"/api/runs/{run_id}", user="mf-stranger")[0]
    stranger_manifest = http(live, "GET", f"/api/runs/{run_id}/manifest", user="mf-stranger")[0]
    assert stranger_manifest == stranger_run == 404
    viewer = live.store.ensure_user("mf-viewer")
    live.store.set_share(viewer.id, "viewer", notebook_id=nb.id)
    assert manifest(live, run_id, user="mf-viewer")["run_id"] == run_id
    # Lineage lists only runs of notebooks the caller may view.
    wrote = live.notebook("select 1 as a as t;\nsave overwrite t as delta.`mf.private`;", owner=owner)
    run(live, wrote, {"cell_id": wrote.cells[0].id})
    assert http(live, "GET", "/api/lineage?table=mf.private", user="mf-stranger")[1]["versions"] == []
    assert http(live, "GET", "/api/lineage?table=../etc")[0] == 400


def test_a_cell_run_from_the_page_over_socketio_keeps_its_manifest(live: LiveServer) -> None:
    from tests.support.clients import Viewer, join

    nb = live.notebook("select 1 as a as t;\nsave overwrite t as delta.`mf.socket`;\nload delta.`mf.socket` as back;")
    v = Viewer(live.url)
    try:
        join(v, nb)
        ack = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)
        assert ack["ok"], ack
        run_id = ack["run_ids"][0]
        v.wait_status(run_id, "done", timeout=120)
    finally:
        v.close()
    body = manifest(live, run_id)
    assert [(e["access"], e["table"], e["version"], e["verified"]) for e in body["entries"]] == \
        [("write", "mf.socket", 0, True), ("read", "mf.socket", 0, True)]
