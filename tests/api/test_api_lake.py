"""The data panel's API (console/server/api/lake.py) on a live server: the lake's delta tables with
their versions and history, uploads that a `load` then reads, and the uploads that must fail."""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.support.clients import TEST_USER_HEADER, http, live_server_fixture
from tests.support.live_server import LiveServer

live = live_server_fixture("lake-data")


def send(live: LiveServer, query: str, data: bytes, user: str | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(f"{live.url}/api/lake/upload?{query}", data=data, method="POST",
                                 headers={"Content-Type": "application/octet-stream"})
    if user:
        req.add_header(TEST_USER_HEADER, user)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        return exc.code, json.loads(body) if body.startswith(b"{") else body.decode()


def lake_of(server: LiveServer) -> Any:
    from console.server.deps import CONFIG_KEY

    return server.app.extensions[CONFIG_KEY].data_dir / "lake"


@pytest.fixture(scope="module")
def lake_dir(live: LiveServer) -> Any:
    return lake_of(live)


def test_a_delta_table_in_the_lake_is_listed_with_its_versions(live: LiveServer, lake_dir: Any) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    target = lake_dir / "sales" / "orders"  # where `save … as delta.`sales.orders`` writes
    write_deltalake(str(target), pa.table({"id": [1], "name": ["a"]}), mode="overwrite")
    write_deltalake(str(target), pa.table({"id": [2], "name": ["b"]}), mode="append")
    status, body = http(live, "GET", "/api/lake")
    assert status == 200, body
    orders = next(t for t in body["tables"] if t["name"] == "sales.orders")
    assert (orders["version"], orders["rows"], orders["files"]) == (1, 2, 2)
    assert [c["name"] for c in orders["schema"]] == ["id", "name"]
    assert body["roots"][0]["path"] == "lake:" and body["upload"]["max_bytes"] > 0
    status, one = http(live, "GET", "/api/lake/tables/sales.orders")
    assert status == 200
    assert [v["version"] for v in one["history"]] == [1, 0]
    assert [v["operation"] for v in one["history"]] == ["WRITE", "WRITE"] or one["history"][0]["operation"]
    assert http(live, "GET", "/api/lake/tables/sales.nope")[0] == 404
    assert http(live, "GET", "/api/lake/tables/..%2Fserver")[0] in (400, 404)


def test_an_uploaded_csv_is_loaded_by_the_statement_it_answers(live: LiveServer, lake_dir: Any) -> None:
    status, body = send(live, "name=fruit%20sales.csv", b"fruit,n\nbanana,372\napple,589\n")
    assert status == 201, body
    assert body["path"] == "uploads/fruit sales.csv" and body["format"] == "csv" and body["bytes"] == 29
    assert body["load"] == ('load csv.`uploads/fruit sales.csv` where header="true" and inferSchema="true" '
                            'as fruit_sales;')
    assert (lake_dir / "uploads" / "fruit sales.csv").read_bytes().startswith(b"fruit,n")
    assert not [p for p in (lake_dir / "uploads").iterdir() if p.name.startswith(".upload-")]
    # The statement it answers loads it: the engine itself, over the server's data dir (in this
    # process: the sandboxed kernel's walls are tests/sandbox' business).
    from console.config import load_config
    from console.kernel.session import Session

    session = Session(load_config({"DATA_DIR": str(lake_dir.parent)}), session_id="lake-upload")
    try:
        out = session.run_cell(body["load"] + "\nselect sum(n) as total from fruit_sales as s;")
        assert out.ok, out.error
        assert out.result is not None and out.result.rows == [[961]]
    finally:
        session.shutdown()
    # The same name again is refused unless asked to replace it; listed under its folder.
    assert send(live, "name=fruit%20sales.csv", b"a\n1\n")[0] == 409
    assert send(live, "name=fruit%20sales.csv&overwrite=true", b"a\n1\n")[0] == 201
    status, listing = http(live, "GET", "/api/lake/files?path=uploads")
    assert {"name": "uploads/fruit sales.csv", "kind": "file", "size": 4} in listing["entries"]


@pytest.mark.parametrize("query, why", [
    ("name=../escape.csv", "plain file name"),
    ("name=a/b.csv", "plain file name"),
    ("name=..csv", "plain file name"),
    ("name=.hidden.csv", "plain file name"),
    ("name=x.csv%00.txt", "plain file name"),
    ("name=x.csv&folder=../server", "'folder'"),
    ("name=x.csv&folder=uploads/../../server", "'folder'"),
    ("name=x.csv&folder=/etc", "'folder'"),
    ("name=x.csv&folder=_delta_log", "'folder'"),
    ("name=x.csv&path=/etc", "unknown parameter path"),
    ("name=x.csv&overwrite=yes", "true or false"),
])
def test_names_and_folders_that_leave_the_lake_are_refused(live: LiveServer, lake_dir: Any, query: str,
                                                          why: str) -> None:
    status, body = send(live, query, b"a\n1\n")
    assert status == 400 and why in body["error"], body
    assert not (lake_dir.parent / "escape.csv").exists() and not (lake_dir.parent / "server" / "x.csv").exists()


def test_an_uploaded_workbook_answers_an_excel_load(live: LiveServer, tmp_path: Any) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(("fruit", "n"))
    book.active.append(("banana", 372))
    book.save(tmp_path / "w.xlsx")
    status, body = send(live, "name=w.xlsx", (tmp_path / "w.xlsx").read_bytes())
    assert status == 201, body
    assert body["load"] == "load excel.`uploads/w.xlsx` as w;"


def test_types_contents_size_and_links_are_refused(live: LiveServer, lake_dir: Any) -> None:
    status, body = send(live, "name=tool.exe", b"MZ")
    assert status == 415 and ".csv" in body["error"] and ".parquet" in body["error"]
    status, body = send(live, "name=fake.parquet", b"not parquet at all")
    assert status == 415 and "Parquet" in body["error"]
    status, body = send(live, "name=binary.csv", b"\x00\x01\x02\xff\xfe")
    assert status == 415 and "UTF-8" in body["error"]
    status, body = send(live, "name=list.json", b"hello")
    assert status == 415 and "JSON" in body["error"]
    assert send(live, "name=empty.csv", b"")[0] == 400
    # A link a cell planted in the lake does not take the upload out of it.
    outside = lake_dir.parent / "outside"
    outside.mkdir(exist_ok=True)
    os.symlink(outside, lake_dir / "planted")
    status, body = send(live, "name=x.csv&folder=planted", b"a\n1\n")
    assert status == 400 and "link" in body["error"]
    assert not (outside / "x.csv").exists()
    (lake_dir / "uploads").mkdir(exist_ok=True)
    os.symlink(outside / "target.csv", lake_dir / "uploads" / "linked.csv")
    assert send(live, "name=linked.csv", b"a\n1\n")[0] == 409
    assert not (outside / "target.csv").exists()
    assert not [p for p in (lake_dir / "uploads").iterdir() if p.name.startswith(".upload-")]


def test_an_upload_over_the_cap_keeps_nothing(tmp_path_factory: pytest.TempPathFactory) -> None:
    server = LiveServer(str(tmp_path_factory.mktemp("lake-cap")), UPLOAD_MAX_BYTES=1000)
    try:
        status, body = send(server, "name=big.csv", b"x\n" * 2000)
        assert status == 413 and "1000" in body["error"], body
        uploads = lake_of(server) / "uploads"
        assert not uploads.exists() or list(uploads.iterdir()) == []
    finally:
        server.close()


def test_a_reader_may_neither_list_nor_upload(live: LiveServer) -> None:
    live.store.ensure_user("rita-reader", site_role="reader")
    status, body = send(live, "name=x.csv", b"a\n1\n", user="rita-reader")
    assert status == 403, body
    assert http(live, "GET", "/api/lake", user="rita-reader")[0] == 403
    assert http(live, "GET", "/api/lake/tables/sales.orders", user="rita-reader")[0] == 403
    live.store.ensure_user("mo-member", site_role="member")
    assert http(live, "GET", "/api/lake", user="mo-member")[0] == 200


def test_the_session_tables_come_from_the_callers_own_kernel(live: LiveServer) -> None:
    from tests.support.clients import run_cell_and_wait

    nb = live.notebook("select 1 as id, 'x' as label as mine;")
    path = f"/api/lake/session/{nb.id}"
    assert http(live, "GET", path)[1] == {"tables": [], "kernel": False}  # nothing ran yet
    run_cell_and_wait(live, nb, nb.cells[0].id)
    status, body = http(live, "GET", path)
    assert status == 200 and body["kernel"] is True
    assert {"name": "mine", "rows": 1, "columns": [{"name": "id", "type": "int"},
                                                   {"name": "label", "type": "string"}]} in body["tables"]
    # Another member has a session of their own (nothing in it), and one without a share none at all.
    live.store.ensure_user("una-member", site_role="member")
    assert http(live, "GET", path, user="una-member")[0] in (403, 404)


def test_an_uploaded_file_is_the_members_groups_to_replace(live: LiveServer, lake_dir: Any) -> None:
    """Sessions run under uids of their own in the members group (cluster/identity.py): an upload
    made before any kernel started must still be theirs to replace from a cell."""
    import stat

    from console.cluster import identity
    from console.server.deps import CONFIG_KEY

    assert send(live, "name=shared.csv&folder=team/in", b"a\n1\n")[0] == 201
    folder, made = lake_dir / "team" / "in", lake_dir / "team" / "in" / "shared.csv"
    assert stat.S_IMODE(folder.stat().st_mode) & 0o070 == 0o070 and stat.S_IMODE(made.stat().st_mode) & 0o060 == 0o060
    if identity.available():
        gid = identity.members_gid(live.app.extensions[CONFIG_KEY])
        assert folder.stat().st_gid == gid and made.stat().st_gid == gid
