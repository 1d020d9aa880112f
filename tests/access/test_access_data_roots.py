"""CONSOLE_DATA_ROOTS through the engine and through a real notebook run: load and save outside the
roots, by `..` or by a symlink, are refused with an error naming the roots; inside works."""
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
    from console.server.kernel_process import kernel_config

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


def _wait(client: Any, run_id: str, timeout: float = 150.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = client.get(f"/api/runs/{run_id}").json
        if view["status"] not in ("queued", "running"):
            return view  # type: ignore[no-any-return]
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish: {view}")
