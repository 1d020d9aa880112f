"""Attacks on the data panel (console/server/api/lake.py, lake_read.py) through a live server: a
member's cell writes the lake, so its delta logs and links are hostile input to the server, which
runs with more rights than any member.

- A malformed `_delta_log` gives that table an error entry; the listing answers 200 for everyone.
- A link inside the lake to a folder outside it is never followed: not listed, never read.
- Hostile query strings answer 400, not 500.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.clients import http, live_server_fixture
from tests.support.live_server import LiveServer

live = live_server_fixture("lake-hostile")

ADD = {"add": {"path": "part-0.parquet", "size": 10, "stats": json.dumps({"numRecords": 3})}}
META = {"metaData": {"schemaString": json.dumps({"fields": [{"name": "id", "type": "long"}]}),
                     "partitionColumns": []}}


def _lake(server: LiveServer) -> Path:
    from console.server.deps import CONFIG_KEY

    return Path(server.app.extensions[CONFIG_KEY].data_dir) / "lake"


def _log(folder: Path, files: dict[str, str]) -> None:
    log = folder / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (log / name).write_text(text, "utf-8")


def _lines(*actions: Any) -> str:
    return "\n".join(json.dumps(a) for a in actions) + "\n"


V0 = "0" * 20 + ".json"
V1 = "0" * 19 + "1.json"

MALFORMED = {
    "superscript": {"².json": _lines(META, ADD)},                 # '²'.isdigit() is True, int('²') is not
    "size_text": {V0: _lines(META, {"add": {"path": "a.parquet", "size": "abc"}})},
    "partitions_number": {V0: _lines({"metaData": {**META["metaData"], "partitionColumns": 5}}, ADD)},
    "truncated": {V0: _lines(META, ADD), V1: '{"add": {"path": "b.parq'},
    "nested": {V0: "[" * 100_000 + "]" * 100_000 + "\n"},        # past json's recursion limit
    "add_list": {V0: _lines(META, {"add": ["not", "an", "object"]})},
    "size_huge": {V0: _lines(META, {"add": {"path": "a.parquet", "size": 1e400}})},  # inf
    "not_utf8": {},
}


@pytest.fixture(scope="module")
def hostile_lake(live: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    lake = _lake(live)
    _log(lake / "good" / "orders", {V0: _lines(META, ADD, {"commitInfo": {"timestamp": 1, "operation": "WRITE"}})})
    for name, files in MALFORMED.items():
        _log(lake / "bad" / name, files)
    (lake / "bad" / "not_utf8" / "_delta_log" / V0).write_bytes(b"\xff\xfe{}\n")
    fifo_log = lake / "bad" / "fifo" / "_delta_log"
    fifo_log.mkdir(parents=True)
    os.mkfifo(fifo_log / V0)  # reading it would hang the request for good

    outside = tmp_path_factory.mktemp("outside-the-lake")
    secret = {"metaData": {"schemaString": json.dumps({"fields": [{"name": "outside_secret", "type": "long"}]})}}
    _log(outside / "vault", {V0: _lines(secret, ADD)})
    (outside / "note.txt").write_text("outside")
    (lake / "db3").symlink_to(outside)                          # a db folder that is a link out
    (lake / "db4").mkdir()
    (lake / "db4" / "vault").symlink_to(outside / "vault")      # a table folder that is a link out
    _log(lake / "db5" / "t", {})
    (lake / "db5" / "t" / "_delta_log").rmdir()
    (lake / "db5" / "t" / "_delta_log").symlink_to(outside / "vault" / "_delta_log")
    _log(lake / "db6" / "t", {})
    (lake / "db6" / "t" / "_delta_log" / V0).symlink_to(outside / "vault" / "_delta_log" / V0)
    (lake / "uploads").mkdir(exist_ok=True)
    (lake / "uploads" / "out.txt").symlink_to(outside / "note.txt")
    return {"lake": lake, "outside": outside}


def test_a_malformed_delta_log_is_that_tables_error_not_a_500(live: LiveServer, hostile_lake: dict[str, Path]) -> None:
    status, body = http(live, "GET", "/api/lake", user="alice")
    assert status == 200, body
    by_name = {t["name"]: t for t in body["tables"]}
    good = by_name["good.orders"]
    assert (good["version"], good["rows"], good["size"], good["files"]) == (0, 3, 10, 1) and "error" not in good
    for name in [*MALFORMED, "fifo"]:
        entry = by_name[f"bad.{name}"]
        assert entry["error"] and entry["kind"] == "delta", entry
    assert "version 1" in by_name["bad.truncated"]["error"]
    assert "not a file" in by_name["bad.fifo"]["error"]
    for name in [*MALFORMED, "fifo"]:  # one table's own page answers too, with its error
        status, one = http(live, "GET", f"/api/lake/tables/bad.{name}", user="alice")
        assert status == 200 and one["error"], (name, one)


def test_a_link_out_of_the_lake_is_never_followed(live: LiveServer, hostile_lake: dict[str, Path]) -> None:
    status, body = http(live, "GET", "/api/lake", user="alice")
    assert status == 200, body
    text = json.dumps(body)
    assert "outside_secret" not in text  # no schema read from beyond the link
    names = {t["name"] for t in body["tables"]}
    assert not names & {"db3.vault", "db4.vault"}, names
    for linked in ("db5.t", "db6.t"):  # the table folder is real, its log (or its version) a link: refused
        (entry,) = [t for t in body["tables"] if t["name"] == linked] or [{"error": "not listed"}]
        assert entry.get("error") and "schema" not in entry, entry
    assert "db3/" not in {e["name"] for e in body["entries"]}
    for path in ("db3/", "db3/vault/", "db4/vault/", "db5/t/_delta_log/"):
        status, listing = http(live, "GET", f"/api/lake/files?path={path}", user="alice")
        assert status == 200 and listing["entries"] == [], (path, listing)
    status, listing = http(live, "GET", "/api/lake/files?path=uploads/", user="alice")
    assert status == 200 and "uploads/out.txt" not in {e["name"] for e in listing["entries"]}
    assert http(live, "GET", "/api/lake/tables/db3.vault", user="alice")[0] == 404
    assert http(live, "GET", "/api/lake/tables/db4.vault", user="alice")[0] == 404


@pytest.mark.parametrize("query", ["%00", "a%00b/", "uploads%0a", "a/" * 3000, "%7f"])
def test_a_hostile_files_path_is_a_400(live: LiveServer, query: str) -> None:
    status, body = http(live, "GET", f"/api/lake/files?path={query}", user="alice")
    assert status == 400 and "'path'" in body["error"], body
