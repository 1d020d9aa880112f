"""The tests' one live server: a real app on 127.0.0.1 whose kernels run the kernel module a test names.

- `LiveServer`: create_app in the test process behind a threaded Werkzeug server (websockets
  included), so a test can reach the store and the kernel manager; `auth.current_user` reads
  the test's user header (clients.TEST_USER_HEADER) while it runs.
- `start_server`: the production gunicorn server in a child process (tests/support/serve.py),
  for browser tests, with a clean CONSOLE_* environment plus what the test adds.
- `Served`: any app behind a threaded server (a test that builds its own app, logins included).

Kernels run `SCRIPTED_KERNEL` (the real engine plus `--script` cells) unless a test passes
`kernel_module=REAL_KERNEL`.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from console.server.sessions.kernel_process import KERNEL_MODULE as REAL_KERNEL
from tests.support.clients import TEST_USER_HEADER

REPO = Path(__file__).resolve().parents[2]
SCRIPTED_KERNEL = "tests.support.scripted_kernel"
DIST = REPO / "console" / "server" / "static" / "dist" / "main.js"

__all__ = ["DIST", "REAL_KERNEL", "REPO", "SCRIPTED_KERNEL", "LiveServer", "Served", "ServerProcess",
           "build_assets", "free_port", "kernels_now", "end_kernels_since", "server_env", "start_server",
           "stop_server"]

# The servers of this test process still open (a session or module fixture's outlives many tests).
OPEN: list[Any] = []
# Every server child process not yet stopped: a failing test's report shows their logs' last lines
# (tests/conftest.py), since the log files are gone once the run's temporary folders are.
RUNNING: list[ServerProcess] = []


def kernels_now() -> set[tuple[int, str]]:
    """(server, notebook) of every session with a kernel, in every open server."""
    return {(id(server), notebook) for server in list(OPEN) for notebook in server.notebooks_with_kernels()}


def end_kernels_since(before: set[tuple[int, str]]) -> None:
    """Stop the kernels that notebooks made after `before` started in the open servers.

    A server that outlives its tests kept every test's kernels: a session-scoped browser server
    ended the serial suite with 40 idle kernels and the test process with 73 (each 90 to 250 MB),
    and four xdist workers each holding theirs filled the machine's memory. A kernel a fixture
    started before the test (a module's warm kernel) is left running.
    """
    for server in list(OPEN):
        for notebook in server.notebooks_with_kernels():
            if (id(server), notebook) not in before:
                server.stop_kernel(notebook)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pythonpath() -> str:
    """The repository first, so `python -m tests.support.…` works from any working directory."""
    return os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the developer's CONSOLE_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONSOLE_")}
    env["PYTHONPATH"] = _pythonpath()
    env["CONSOLE_RAY_POOL"] = "0"  # no session heads ahead of need (tests/conftest.py), unless `extra` says
    env.update(extra or {})
    return env


def build_assets() -> None:
    """The bundle must exist and be newer than every source file (make test builds it too)."""
    src = REPO / "frontend" / "src"
    newest = max(p.stat().st_mtime for p in src.rglob("*") if p.is_file())
    if not DIST.exists() or DIST.stat().st_mtime < newest:
        subprocess.run(["npm", "run", "--silent", "build"], cwd=REPO / "frontend", check=True, timeout=180)


class Served:
    """An app behind a threaded Werkzeug server on a free port of 127.0.0.1."""

    def __init__(self, app: Any) -> None:
        from werkzeug.serving import make_server

        # The dev server logs a websocket's closing frame as a bad HTTP request; that is noise here.
        logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
        self._httpd = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self._httpd.server_port}"
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, at every test's teardown.
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self._manager = getattr(app, "extensions", {}).get("sessions")
        if self._manager is not None:
            OPEN.append(self)

    def notebooks_with_kernels(self) -> list[str]:
        assert self._manager is not None
        return [s.notebook_id for s in self._manager.get().all_sessions() if s.kernel is not None and not s.lane]

    def stop_kernel(self, notebook_id: str) -> None:
        assert self._manager is not None
        manager = self._manager.get()
        for session in manager.sessions_of(notebook_id):
            manager.shut_down(session, None)

    def close(self) -> None:
        if self in OPEN:
            OPEN.remove(self)
        self._httpd.shutdown()
        self._httpd.server_close()  # the listening socket: left open, each served app kept one per test


class LiveServer:
    """create_app over `data_dir` in this process, served on 127.0.0.1; the user is the test's header."""

    def __init__(self, data_dir: str, *, kernel_module: str = SCRIPTED_KERNEL, **settings: Any) -> None:
        from flask import current_app, request

        from console.server import auth, create_app

        # A test server outlives many tests' notebooks, more than the per-user cap of kernels
        # (CONSOLE_SESSIONS_PER_USER) allows at once; tests of the cap set it themselves.
        self.app = create_app({"DATA_DIR": data_dir, "TESTING": True, "KERNEL_ENV": {"PYTHONPATH": _pythonpath()},
                               "SESSIONS_PER_USER": 0, **settings}, kernel_module=kernel_module)
        self.store = self.app.extensions["store"]
        self._original = original = auth.current_user
        store, app = self.store, self.app

        def test_user() -> Any:
            # Who the test says it is (the local admin when it says nothing); login has its own tests.
            # Only for this server's app: another app of the same test process (a login-mode one a
            # later test builds while this server lives on) keeps its real logins.
            if request and current_app._get_current_object() is not app:
                return original()
            name = request.headers.get(TEST_USER_HEADER) if request else None
            return store.ensure_user(name) if name else store.get_user_by_name("admin")

        auth.current_user = test_user
        self._served = Served(self.app)  # which OPEN lists: its kernels end with each test's
        self.url = self._served.url

    @property
    def manager(self) -> Any:
        return self.app.extensions["sessions"].get()

    def notebook(self, *sources: str | tuple[str, str], owner: str = "admin", kind: str = "mlsql") -> Any:
        """A notebook of cells: a source (of `kind`) or a (kind, source) pair each."""
        user = self.store.ensure_user(owner)
        cells = [{"kind": s[0], "source": s[1]} if isinstance(s, tuple) else {"kind": kind, "source": s}
                 for s in sources]
        return self.store.create_notebook(f"nb-{time.monotonic_ns()}", owner_id=user.id, cells=cells)

    def close(self) -> None:
        from console.server import auth

        self.app.extensions["sessions"].shutdown()
        self._served.close()
        auth.current_user = self._original


class ServerProcess:
    """A server child process: its URL, data dir, log, and JSON API helpers for seeding."""

    def __init__(self, url: str, data_dir: Path, proc: subprocess.Popen[bytes], log: Path,
                 single_user: bool = True) -> None:
        self.url, self.data_dir, self.proc, self.log = url, data_dir, proc, log
        RUNNING.append(self)
        if single_user:  # its API answers without a login: end_kernels_since() can ask it
            OPEN.append(self)

    def notebooks_with_kernels(self) -> list[str]:
        try:
            sessions = self.api("GET", "/sessions")["sessions"]
        except (urllib.error.URLError, OSError):  # stopped, or stopping
            return []
        return [s["notebook_id"] for s in sessions if s["status"] != "dead" and not s["job"]]

    def stop_kernel(self, notebook_id: str) -> None:
        try:
            self.api("POST", f"/sessions/{notebook_id}/stop", {})
        except (urllib.error.URLError, OSError):
            pass

    def log_tail(self, needle: str = "kernel", lines: int = 40) -> str:
        """The server log's last lines that mention `needle`: what a failing test prints about why."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError as exc:
            return f"(no server log: {exc})"
        return "\n".join([line for line in text.splitlines() if needle in line][-lines:])

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

    def store(self) -> Any:
        """The server's own database, opened beside it (for seeding what the API cannot make)."""
        from console.store import Store

        return Store(f"sqlite:///{self.data_dir / 'server' / 'console.db'}", run_migrations=False)

    def stop(self) -> None:
        if self in OPEN:
            OPEN.remove(self)
        if self in RUNNING:
            RUNNING.remove(self)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def start_server(data_dir: Path, env: dict[str, str] | None = None, *, kernel_module: str = SCRIPTED_KERNEL,
                 threads: int = 32, clock_ahead: float = 0.0) -> ServerProcess:
    """Serve `data_dir` with gunicorn in a child process; single-user unless env says otherwise.

    clock_ahead: the server's clock that many seconds ahead of the machine's (serve.py).

    Its output goes to server.log beside the data dir.
    """
    build_assets()
    port = free_port()
    # Single user: the server listens on 127.0.0.1 only; login has its own tests.
    # No per-user cap of kernels unless the test sets one (see LiveServer).
    full_env = server_env({"CONSOLE_SINGLE_USER": "true", "CONSOLE_SESSIONS_PER_USER": "0", **(env or {})})
    log = data_dir.parent / "server.log"
    with open(log, "wb") as out:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.serve", "--host", "127.0.0.1", "--port", str(port),
             "--data-dir", str(data_dir), "--threads", str(threads), "--kernel-module", kernel_module,
             *(["--clock-ahead", str(clock_ahead)] if clock_ahead else [])],
            cwd=REPO, env=full_env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}; see {log}")
        try:
            urllib.request.urlopen(url + "/api/health", timeout=2).read()
            return ServerProcess(url, data_dir, proc, log, single_user=full_env["CONSOLE_SINGLE_USER"] == "true")
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server did not answer within 60 s; see {log}")


def stop_server(server: ServerProcess) -> None:
    server.stop()
