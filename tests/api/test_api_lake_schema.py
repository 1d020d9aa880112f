"""Every file the data panel lists shows its columns (GET /api/lake/session/<id>/schema): text
formats read by the server from their head, Parquet by the notebook's session, types in Spark's
names; paths that leave the lake, links and folders are refused."""
from __future__ import annotations

import os
import urllib.parse
from typing import Any

from tests.support.clients import http, live_server_fixture, run_cell_and_wait
from tests.support.live_server import LiveServer

live = live_server_fixture("lake-schema")


def lake_of(server: LiveServer) -> Any:
    from console.server.deps import CONFIG_KEY

    return server.app.extensions[CONFIG_KEY].data_dir / "lake"


def schema(live: LiveServer, nb_id: str, path: str, user: str | None = None) -> tuple[int, Any]:
    return http(live, "GET", f"/api/lake/session/{nb_id}/schema?path={urllib.parse.quote(path)}", user=user)


def test_a_csv_and_json_lines_show_their_columns_without_a_session(live: LiveServer) -> None:
    lake = lake_of(live)
    (lake / "uploads").mkdir(parents=True, exist_ok=True)
    (lake / "uploads" / "fruit.csv").write_text("fruit,n,price,day,ripe\nbanana,372,1.5,2024-01-02,true\n"
                                                "apple,589,0.25,2024-02-03,false\n")
    (lake / "uploads" / "tab.tsv").write_text("a\tb\n1\tx\n")
    (lake / "uploads" / "events.jsonl").write_text('{"id": 1, "tags": ["a"], "at": {"x": 1.5}}\n{"id": 2}\n')
    nb = live.notebook("select 1 as a as t;")
    status, body = schema(live, nb.id, "uploads/fruit.csv")
    assert status == 200, body
    assert body["format"] == "csv" and body["sampled"] is False
    assert body["columns"] == [{"name": "fruit", "type": "string"}, {"name": "n", "type": "bigint"},
                               {"name": "price", "type": "double"}, {"name": "day", "type": "date"},
                               {"name": "ripe", "type": "boolean"}]
    assert schema(live, nb.id, "uploads/tab.tsv")[1]["columns"] == [{"name": "a", "type": "bigint"},
                                                                    {"name": "b", "type": "string"}]
    assert schema(live, nb.id, "uploads/events.jsonl")[1]["columns"] == [
        {"name": "id", "type": "bigint"}, {"name": "tags", "type": "array<string>"},
        {"name": "at", "type": "struct<x:double>"}]


def test_a_big_csv_is_read_from_its_head_only(live: LiveServer) -> None:
    lake = lake_of(live)
    (lake / "big").mkdir(parents=True, exist_ok=True)
    (lake / "big" / "rows.csv").write_text("id,label\n" + "".join(f"{i},row {i}\n" for i in range(200_000)))
    nb = live.notebook("select 1 as a as t;")
    status, body = schema(live, nb.id, "big/rows.csv")
    assert status == 200 and body["sampled"] is True
    assert body["columns"] == [{"name": "id", "type": "bigint"}, {"name": "label", "type": "string"}]


def test_a_parquet_file_is_read_by_the_notebooks_session(live: LiveServer) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    lake = lake_of(live)
    (lake / "exports").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "n": pa.array([2], pa.uint64()),
                             "d": pa.array([1], pa.decimal128(38, 0)), "label": pa.array(["x"], pa.large_string())}),
                   lake / "exports" / "p.parquet")
    (lake / "exports" / "broken.parquet").write_bytes(b"PAR1 not really PAR1")
    nb = live.notebook("select 1 as a as t;")
    status, body = schema(live, nb.id, "exports/p.parquet")
    assert status == 200 and body["columns"] is None and "run a cell" in body["note"], body  # no session yet
    run_cell_and_wait(live, nb, nb.cells[0].id)
    status, body = schema(live, nb.id, "exports/p.parquet")
    assert status == 200 and body["format"] == "parquet", body
    assert body["columns"] == [{"name": "id", "type": "int"}, {"name": "n", "type": "decimal(20,0)"},
                               {"name": "d", "type": "decimal(38,0)"}, {"name": "label", "type": "string"}]
    status, body = schema(live, nb.id, "exports/broken.parquet")
    assert status == 200 and body["columns"] is None and "not a readable parquet file" in body["note"], body
    assert str(lake) not in body["note"]  # no server path


def test_paths_that_leave_the_lake_links_and_folders_are_refused(live: LiveServer, tmp_path: Any) -> None:
    lake = lake_of(live)
    outside = tmp_path / "secret.csv"
    outside.write_text("password\nhunter2\n")
    (lake / "links").mkdir(parents=True, exist_ok=True)
    if not (lake / "links" / "secret.csv").exists():
        os.symlink(outside, lake / "links" / "secret.csv")
    nb = live.notebook("select 1 as a as t;")
    assert schema(live, nb.id, "links/secret.csv")[0] == 404  # a link is never followed
    assert schema(live, nb.id, "links")[0] == 404
    for bad in ("../secret.csv", "/etc/passwd.csv", "", "a\nb.csv", "_delta_log/x.json"):
        assert schema(live, nb.id, bad)[0] == 400, bad
    status, body = http(live, "GET", f"/api/lake/session/{nb.id}/schema?path=x.csv&other=1")
    assert status == 400 and "unknown parameter other" in body["error"]
