"""Helpers of the sandbox tests: a logged-in member over HTTP, and the walled server's paths.

The server (create_app in this process, served over HTTP by tests/support's `Served`) owns its
data dir's embedded Ray head, which it starts sandboxed at the first Python cell and stops at
the end. "mallory" is a member with no share on anything: she runs only her own notebooks.
"""
from __future__ import annotations

import json
import sqlite3
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

from console.server.auth import CSRF_HEADER
from tests.support.live_server import Served

PASSWORD = "correct horse battery"


class Member:
    """A logged-in HTTP client of the server (cookie and CSRF token, like the page)."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        self.csrf = ""
        self.csrf = self.call("POST", "/login", {"username": name, "password": PASSWORD})[1]["csrf_token"]

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + "/api" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", CSRF_HEADER: self.csrf})
        try:
            with self.opener.open(req, timeout=60) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def notebook(self, *cells: str | tuple[str, str], name: str = "") -> dict[str, Any]:
        """A notebook of her own with these cells (nothing run)."""
        specs = [{"kind": "mlsql", "source": c} if isinstance(c, str) else {"kind": c[0], "source": c[1]}
                 for c in cells]
        status, nb = self.call("POST", "/notebooks", {"name": name or f"probe-{time.monotonic_ns()}",
                                                      "cells": specs})
        assert status in (200, 201), nb
        return dict(nb)

    def run(self, *cells: str | tuple[str, str], timeout: float = 240) -> list[dict[str, Any]]:
        """Make her own notebook of these cells, run it all, and return each cell's finished run."""
        return self.run_in(self.notebook(*cells), None, timeout)

    def run_in(self, nb: dict[str, Any], index: int | None, timeout: float = 240) -> list[dict[str, Any]]:
        """Run one cell of nb (index), or all of it (None), in her session of it; each finished run."""
        body = {"all": True} if index is None else {"cell_id": nb["cells"][index]["id"]}
        status, started = self.call("POST", f"/notebooks/{nb['id']}/run", body)
        assert status == 202, started
        return self.wait(started["run_ids"], timeout)

    def wait(self, run_ids: list[str], timeout: float = 240) -> list[dict[str, Any]]:
        runs = []
        for run_id in run_ids:
            deadline = time.monotonic() + timeout
            while True:
                status, run = self.call("GET", f"/runs/{run_id}")
                assert status == 200, run
                if run["status"] in ("done", "error", "interrupted", "cancelled"):
                    break
                assert time.monotonic() < deadline, f"run {run_id} still {run['status']}"
                time.sleep(0.3)
            runs.append(run)
        return runs


def text_of(run: dict[str, Any]) -> str:
    """Everything a run showed: its output, its error and its result rows, as one string."""
    return json.dumps(run.get("events", []))


class Walled:
    def __init__(self, app: Any, served: Served, data_dir: Path) -> None:
        self.app, self.served, self.data_dir = app, served, data_dir
        cfg = app.extensions["config"]
        self.db_path = Path(cfg.database_url[len("sqlite:///"):])
        self.key_path = cfg.private_dir / "secret_key"

    def member(self, name: str = "mallory") -> Member:
        return Member(self.served.url, name)

    def snapshot(self) -> dict[str, Any]:
        """What an attack would change: the users and the shares (read beside the server)."""
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True) as conn:
            return {table: conn.execute(f"select * from {table} order by 1").fetchall()
                    for table in ("users", "shares")}
