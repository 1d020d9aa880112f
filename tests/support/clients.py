"""Clients of a live server: a Socket.IO viewer that records every event, and JSON HTTP calls.

With an in-process LiveServer a test names its user in TEST_USER_HEADER (live_server.py swaps
`auth.current_user` for a reader of that header); login has tests of its own.
"""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

TEST_USER_HEADER = "X-Console-Test-User"


def ordered_client() -> Any:
    """A python-socketio client that handles the server's messages one after another, as a page does.

    Engine.IO's Python client starts a thread per incoming message (`run_async=True`), so on a
    loaded machine a handler for chunk 141 could record it before the one for chunk 140, and a
    test saw output "out of order" that the server had sent in order. A browser's socket handles
    messages in arrival order; so does this client, in its reading thread.
    """
    import engineio
    import socketio

    class _InOrder(engineio.Client):  # type: ignore[misc]
        def _trigger_event(self, event: str, *args: Any, **kwargs: Any) -> Any:
            kwargs["run_async"] = False
            return super()._trigger_event(event, *args, **kwargs)

    class _Client(socketio.Client):  # type: ignore[misc]
        def _engineio_client_class(self) -> type:
            return _InOrder

    return _Client(reconnection=False)


class Viewer:
    """A python-socketio client over websocket that keeps every event it receives."""

    def __init__(self, url: str, user: str | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.sio = ordered_client()
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


def http(server: Any, method: str, path: str, body: Any = None, user: str | None = None) -> tuple[int, Any]:
    """(status, JSON body or text) of one request to a live server (anything with a `url`)."""
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


def run_cell_and_wait(live: Any, nb: Any, cell_id: str, user: str | None = None, timeout: float = 120.0) -> None:
    """Run one cell over HTTP on a LiveServer and wait until its run is done (any other end fails)."""
    status, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": cell_id}, user=user)
    assert status == 202, body
    run_id = body["run_ids"][0]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = live.store.get_run(run_id)
        if run.status in ("done", "error", "interrupted", "cancelled"):
            assert run.status == "done", run.error
            return
        time.sleep(0.05)
    raise AssertionError(f"the cell did not finish in {timeout:.0f} s")


def live_server_fixture(name: str) -> Any:
    """A module-scoped pytest fixture: a LiveServer on a fresh data dir, closed after the module."""
    import pytest

    from tests.support.live_server import LiveServer

    @pytest.fixture(scope="module")
    def live(tmp_path_factory: pytest.TempPathFactory) -> Any:
        server = LiveServer(str(tmp_path_factory.mktemp(name)))
        try:
            yield server
        finally:
            server.close()

    return live


FINAL = ("done", "error", "interrupted", "cancelled")


def runs_ended(live: Any, run_ids: list[str], timeout: float = 120.0) -> list[Any]:
    """The stored runs once every one of them has ended (AssertionError after `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = [live.store.get_run(r) for r in run_ids]
        if all(r.status in FINAL for r in runs):
            return runs
        time.sleep(0.05)
    raise AssertionError(f"runs did not end: {[r.status for r in runs]}")


def job_run_ended(server: Any, job_id: str, run_id: str, timeout: float = 120.0) -> dict[str, Any]:
    """A job run of a served process (`server.api`, as the page sees it) once it has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = next((r for r in server.api("GET", f"/jobs/{job_id}/runs")["runs"] if r["id"] == run_id), None)
        if run is not None and run["status"] not in ("queued", "running"):
            return dict(run)
        time.sleep(0.1)
    raise AssertionError(f"job run {run_id} did not end in {timeout:.0f} s")
