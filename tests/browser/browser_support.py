"""Helpers of the browser tests: a real server process on 127.0.0.1 and the built assets."""
from __future__ import annotations
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
import pytest


HERE = Path(__file__).resolve().parent


REPO = HERE.parent.parent


DIST = REPO / "console" / "web" / "static" / "dist" / "main.js"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A running server: its URL, data dir, and a few JSON API helpers for seeding."""

    def __init__(self, url: str, data_dir: Path, proc: subprocess.Popen[bytes]) -> None:
        self.url, self.data_dir, self.proc = url, data_dir, proc

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + "/api" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def notebook(self, name: str, *sources: str | tuple[str, str], folder: str = "/") -> dict[str, Any]:
        """Create a notebook; a plain string is an MLSQL cell, a (kind, source) pair any kind."""
        cells = [{"kind": "mlsql", "source": s} if isinstance(s, str) else {"kind": s[0], "source": s[1]}
                 for s in sources]
        return self.api("POST", "/notebooks", {"name": name, "folder": folder, "cells": cells})  # type: ignore[no-any-return]


def build_assets() -> None:
    """The bundle must exist and be newer than every source file (make test builds it too)."""
    src = REPO / "frontend" / "src"
    newest = max(p.stat().st_mtime for p in src.rglob("*") if p.is_file())
    if not DIST.exists() or DIST.stat().st_mtime < newest:
        subprocess.run(["npm", "run", "--silent", "build"], cwd=REPO / "frontend", check=True, timeout=120)


def start_server(data_dir: Path, extra_env: dict[str, str] | None = None) -> Server:
    build_assets()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONSOLE_")}
    env.update({
        "CONSOLE_KERNEL_ENGINE": "browser_engine:BrowserScriptSession",
        "CONSOLE_SINGLE_USER": "true",  # the server listens on 127.0.0.1 only; login has its own test
        "PYTHONPATH": os.pathsep.join([str(HERE), str(REPO), env.get("PYTHONPATH", "")]),
        **(extra_env or {}),
    })
    log = open(data_dir.parent / "server.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [sys.executable, "-m", "console", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(data_dir), "--threads", "32"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}; see {log.name}")
        try:
            urllib.request.urlopen(url + "/api/health", timeout=2).read()
            return Server(url, data_dir, proc)
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("server did not answer within 60 s")


def stop_server(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(timeout=10)
