"""Helpers for the session tests: the live server's handle, a recording Socket.IO client, HTTP calls."""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
TEST_USER_HEADER = "X-Console-Test-User"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, app: Any, url: str) -> None:
        self.app = app
        self.url = url
        self.store = app.extensions["store"]

    @property
    def manager(self) -> Any:
        return self.app.extensions["sessions"].get()

    def notebook(self, *sources: str | tuple[str, str], owner: str = "admin", kind: str = "mlsql") -> Any:
        """A notebook of cells: a source (of `kind`) or a (kind, source) pair each."""
        user = self.store.ensure_user(owner)
        cells = [{"kind": s[0], "source": s[1]} if isinstance(s, tuple) else {"kind": kind, "source": s}
                 for s in sources]
        return self.store.create_notebook(f"nb-{time.monotonic_ns()}", owner_id=user.id, cells=cells)


class LiveServer:
    """create_app + a threaded Werkzeug server on 127.0.0.1; `auth.current_user` reads a test header."""

    def __init__(self, data_dir: str, kernel_env: dict[str, str] | None = None, **settings: Any) -> None:
        from flask import request
        from werkzeug.serving import make_server

        from console.server import auth, create_app

        env = {"CONSOLE_KERNEL_ENGINE": "scripted_engine:ScriptedSession", "PYTHONPATH": pythonpath(),
               **(kernel_env or {})}
        self.app = create_app({"DATA_DIR": data_dir, "TESTING": True, "KERNEL_ENV": env, **settings})
        self._original = auth.current_user
        store = self.app.extensions["store"]

        def test_user() -> Any:
            # Who the test says it is (the local admin when it says nothing); login has its own tests.
            name = request.headers.get(TEST_USER_HEADER) if request else None
            return store.ensure_user(name) if name else store.get_user_by_name("admin")

        auth.current_user = test_user  # type: ignore[assignment]
        # The dev server logs a websocket's closing frame as a bad HTTP request; that is noise here.
        logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
        port = free_port()
        self._httpd = make_server("127.0.0.1", port, self.app, threaded=True)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        self.server = Server(self.app, f"http://127.0.0.1:{port}")

    def close(self) -> None:
        from console.server import auth

        self.app.extensions["sessions"].shutdown()
        self._httpd.shutdown()
        auth.current_user = self._original  # type: ignore[assignment]


def pythonpath() -> str:
    repo = HERE.parent.parent
    return os.pathsep.join(p for p in (str(HERE), str(repo), os.environ.get("PYTHONPATH", "")) if p)


class Viewer:
    """A python-socketio client over websocket that keeps every event it receives."""

    def __init__(self, url: str, user: str | None = None) -> None:
        import socketio

        self.events: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.sio = socketio.Client(reconnection=False)
        self.sio.on("event", self._on_event)
        headers = {TEST_USER_HEADER: user} if user else {}
        self.sio.connect(url, transports=["websocket"], headers=headers, wait_timeout=10)

    def _on_event(self, data: dict[str, Any]) -> None:
        with self.cond:
            self.events.append(data)
            self.cond.notify_all()

    def command(self, type_: str, **fields: Any) -> dict[str, Any]:
        return self.sio.call("command", {"type": type_, **fields}, timeout=30)  # type: ignore[no-any-return]

    def wait_for(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 30.0, after: int = 0) -> dict[str, Any]:
        """The first event (from index `after` on) matching pred, waiting up to timeout seconds."""
        deadline = time.monotonic() + timeout
        with self.cond:
            seen = after
            while True:
                for ev in self.events[seen:]:
                    if pred(ev):
                        return ev
                seen = len(self.events)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no matching event in {timeout}s; last: {self.events[-5:]}")
                self.cond.wait(left)

    def wait_status(self, run_id: str, *statuses: str, timeout: float = 60.0) -> dict[str, Any]:
        return self.wait_for(lambda e: e["type"] == "cell_status" and e["run_id"] == run_id
                             and e["status"] in statuses, timeout)

    def outputs(self, run_id: str) -> list[dict[str, Any]]:
        with self.cond:
            return [e for e in self.events if e["type"] == "output" and e["run_id"] == run_id]

    def close(self) -> None:
        self.sio.disconnect()




def http(server: Server, method: str, path: str, body: Any = None, user: str | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server.url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if user:
        req.add_header(TEST_USER_HEADER, user)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            ctype = resp.headers.get("Content-Type", "")
            return resp.status, json.loads(raw) if "json" in ctype else raw.decode()
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def join(v: Viewer, nb: Any, **since: Any) -> dict[str, Any]:
    ack = v.command("join", notebook_id=nb.id, **since)
    assert ack["ok"], ack
    return ack
