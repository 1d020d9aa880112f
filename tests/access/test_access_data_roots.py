"""CONSOLE_DATA_ROOTS through the engine and through a real notebook run: load and save outside the
roots, by `..` or by a symlink, are refused with an error naming the roots; inside works. And in
login mode, a member with no share on anything cannot reach the server's store or secret key from
an MLSQL cell (issue 11 §1's reproductions): relative paths resolve in the lake, jdbc files and
DuckDB's file functions are fenced like paths."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from console.config import Config, load_config
from console.kernel.session import Session


@pytest.fixture
def fence(tmp_path: Path) -> dict[str, Path]:
    allowed, secret = tmp_path / "allowed", tmp_path / "secret"
    allowed.mkdir()
    secret.mkdir()
    pacsv.write_csv(pa.table({"a": [1, 2]}), allowed / "ok.csv")
    pacsv.write_csv(pa.table({"password": ["hunter2"]}), secret / "keys.csv")
    os.symlink(secret, allowed / "link")
    return {"allowed": allowed, "secret": secret, "data": tmp_path / "data"}


def _session(fence: dict[str, Path]) -> Session:
    cfg = load_config({"DATA_DIR": str(fence["data"]), "DATA_ROOTS": [str(fence["allowed"])]})
    return Session(cfg, lambda _e: None, session_id="roots")


@pytest.mark.parametrize("path", ["{secret}/keys.csv", "{allowed}/../secret/keys.csv", "{allowed}/link/keys.csv"])
def test_engine_refuses_loads_outside_the_roots(fence: dict[str, Path], path: str) -> None:
    s = _session(fence)
    try:
        target = path.format(**fence)
        out = s.run_cell(f'load csv.`{target}` where header="true" as t;')
        assert not out.ok and out.error is not None
        assert "outside the allowed data roots" in out.error.message and str(fence["allowed"]) in out.error.message
        assert "t" not in s.tables
    finally:
        s.shutdown()


def test_engine_saves_only_inside_the_roots(fence: dict[str, Path]) -> None:
    s = _session(fence)
    try:
        assert s.run_cell(f'load csv.`{fence["allowed"]}/ok.csv` where header="true" as t;').ok
        for target in (f"{fence['secret']}/out", f"{fence['allowed']}/../secret/out", f"{fence['allowed']}/link/out"):
            out = s.run_cell(f"save overwrite t as parquet.`{target}`;")
            assert not out.ok and "outside the allowed data roots" in out.error.message  # type: ignore[union-attr]
        assert not (fence["secret"] / "out").exists()
        assert s.run_cell(f"save overwrite t as parquet.`{fence['allowed']}/out`;").ok
        assert s.run_cell("save overwrite t as delta.`db.t`;").ok  # the lake in the data dir is the product's own
    finally:
        s.shutdown()


def test_kernels_get_the_roots(cfg: Config) -> None:
    from console.server.sessions.kernel_process import kernel_config

    fenced = load_config({**cfg, "DATA_ROOTS": ["/srv/a", "/srv/b"]})
    assert load_config(json.loads(kernel_config(fenced)))["DATA_ROOTS"] == ["/srv/a", "/srv/b"]


@pytest.mark.timeout(180)
def test_a_notebook_run_outside_the_roots_fails_with_a_clear_error(cfg: Config, fence: dict[str, Path]) -> None:
    from console.server import create_app

    app = create_app({**cfg, "TESTING": True, "DATA_ROOTS": [str(fence["allowed"])]})
    client = app.test_client()
    try:
        nb = client.post("/api/notebooks", json={"name": "fenced", "cells": [
            {"kind": "mlsql", "source": f'load csv.`{fence["allowed"]}/../secret/keys.csv` where header="true" as t;'},
            {"kind": "mlsql", "source": f'load csv.`{fence["allowed"]}/ok.csv` where header="true" as ok;'}]}).json
        bad, good = (c["id"] for c in nb["cells"])
        runs = {}
        for cell in (bad, good):
            r = client.post(f"/api/notebooks/{nb['id']}/run", json={"cell_id": cell})
            assert r.status_code == 202, r.json
            runs[cell] = r.json["run_ids"][0]
        views = {cell: _wait(client, run_id) for cell, run_id in runs.items()}
        assert views[bad]["status"] == "error"
        [error] = [e for e in views[bad]["events"] if e["type"] == "error"]
        assert "outside the allowed data roots" in error["message"] and str(fence["allowed"]) in error["message"]
        assert views[good]["status"] == "done"
    finally:
        app.extensions["sessions"].shutdown()
        app.extensions["store"].close()


def _private_files(cfg: Config) -> tuple[Path, Path]:
    """(store database, secret key) wherever the server keeps them (they sit side by side)."""
    from sqlalchemy.engine import make_url

    db = Path(make_url(cfg.database_url).database or "")
    return db, db.parent / "secret_key"


@pytest.mark.timeout(240)
def test_a_member_cannot_reach_the_store_or_the_secret_from_mlsql(cfg: Config, as_user: Any) -> None:
    mallory = as_user("mallory")  # logged in, no share on anything: makes her own notebook
    db, secret = _private_files(cfg)
    assert db.is_file() and secret.is_file()
    rel = db.relative_to(cfg.data_dir)  # where a relative path used to land: the data folder
    (cfg.data_dir / "dummy.txt").write_text("keep me\n")
    key, shares = secret.read_bytes(), _rows(db, "shares")
    cells = {
        "db": f"load binaryFile.`{rel}` as a;",
        "key": f"load text.`{rel.parent / 'secret_key'}` as b;",
        "up": f"load binaryFile.`../{rel}` as c;",
        "abs": f"load text.`{secret}` as d;",
        "jdbc": ("select 'x' as notebook_id as s;\n"
                 f'save append s as jdbc.`shares` where url="sqlite:///{db}";'),
        "dummy": "select 1 as a as t;\nsave overwrite t as csv.`dummy.txt`;",
        "passwd": "select * from read_text('/etc/passwd') as p;",
        "dbsql": f"select * from read_blob('{db}') as q;",
    }
    nb = mallory.post("/api/notebooks", json={"name": "probe", "cells": [
        {"kind": "mlsql", "source": src} for src in cells.values()]})
    assert nb.status_code in (200, 201), nb.json
    ids = dict(zip(cells, (c["id"] for c in nb.json["cells"]), strict=True))
    views = {}
    for name, cell in ids.items():
        r = mallory.post(f"/api/notebooks/{nb.json['id']}/run", json={"cell_id": cell})
        assert r.status_code == 202, r.json
        views[name] = _wait(mallory, r.json["run_ids"][0])
    errors = {name: next((e["message"] for e in v["events"] if e["type"] == "error"), None)
              for name, v in views.items()}
    assert errors["db"].startswith(f"path {rel} does not exist: ")
    assert errors["key"].startswith(f"path {rel.parent / 'secret_key'} does not exist: ")
    for name, path in (("up", f"../{rel}"), ("abs", "<server path>"), ("jdbc", "<server path>")):
        assert errors[name] is not None and errors[name].startswith(  # type: ignore[union-attr]
            f"path {path} is inside the server's private data folder; "), errors[name]
        assert str(cfg.data_dir) not in errors[name]  # type: ignore[operator]
    assert errors["dummy"] is None and (cfg.data_dir / "lake" / "dummy.txt").is_dir()
    for name, path in (("passwd", "/etc/passwd"), ("dbsql", "<server path>")):
        assert errors[name] is not None and f'Cannot access file "{path}"' in errors[name], errors[name]
    assert secret.read_bytes() == key and _rows(db, "shares") == shares
    assert (cfg.data_dir / "dummy.txt").read_text() == "keep me\n"
    for v in views.values():
        assert key.decode().strip() not in str(v) and "root:x:0:0" not in str(v)


def _rows(db: Path, table: str) -> list[tuple[Any, ...]]:
    import sqlite3

    with sqlite3.connect(db) as con:
        return list(con.execute(f"select * from {table}"))


def _wait(client: Any, run_id: str, timeout: float = 150.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = client.get(f"/api/runs/{run_id}").json
        if view["status"] not in ("queued", "running"):
            return view  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish: {view}")
