"""The Socket.IO namespace: join a notebook's room (stored output replayed, then live), run commands.

Wire: the browser emits `command` with a to_wire() dict of a *Command (console/messages.py) and
gets an ack `{ok: true, ...}` or `{ok: false, status, error}`; the server emits `event` with a
to_wire() dict of an *Event to the room `notebook:<id>`. docs/protocol.md has the details.
"""
from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
from typing import Any, Callable

from flask import Flask, current_app, request
from flask_socketio import SocketIO, emit, join_room, leave_room

from console.messages import InterruptCommand, JoinCommand, LeaveCommand, Message, RestartCommand, RunAllCommand, RunCellCommand, RunFromCommand, from_wire
from console.server.kernels import SessionManager

from console.server import auth
from console.server.access import require
from console.server.errors import ApiError

log = logging.getLogger(__name__)

NAMESPACE = "/"
SESSIONS_KEY = "sessions"


def room(notebook_id: str) -> str:
    return f"notebook:{notebook_id}"


class ManagerHolder:
    """Starts the SessionManager at first use in the serving process (gunicorn forks after create_app)."""

    def __init__(self, factory: Callable[[], SessionManager], owns_ray: bool = True) -> None:
        self._factory = factory
        self._owns_ray = owns_ray
        self._manager: SessionManager | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def get(self) -> SessionManager:
        with self._lock:
            if self._manager is None or self._pid != os.getpid():
                self._manager = self._factory().start()
                self._pid = os.getpid()
                if self._owns_ray:
                    _own_ray_head(self._manager.cfg)
            return self._manager

    def shutdown(self) -> None:
        with self._lock:
            manager, self._manager = self._manager, None
        if manager is None or self._pid != os.getpid():
            return
        manager.shutdown()
        if not self._owns_ray:
            return
        # Kernels start the embedded Ray head at first need and share it; the server stops it.
        try:
            from console.cluster.head import stop_embedded
        except ImportError:
            return
        stop_embedded(manager.cfg)


def _own_ray_head(cfg: Any) -> None:
    """Kernels come and go; the server owns the embedded Ray head they share and stops it on exit."""
    try:
        from console.cluster.head import RayCluster
    except ImportError:
        return
    try:
        RayCluster(cfg).own()
    except OSError:
        log.exception("cannot record the server as the Ray head's owner")


def get_manager() -> SessionManager:
    return current_app.extensions[SESSIONS_KEY].get()  # type: ignore[no-any-return]


def _no_delay(wsgi_app: Any) -> Any:
    """Turn off Nagle's algorithm on each connection before the app (and a websocket) uses it.

    Events are small frames written one after another; with Nagle on, the second of them waits
    for the client's delayed ACK, and a warm cell's result arrived 40 ms late.
    """

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        sock = environ.get("werkzeug.socket") or environ.get("gunicorn.socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass  # not TCP (a unix socket): nothing to tune
        return wsgi_app(environ, start_response)

    return app


def init_sessions(app: Flask) -> None:
    """Attach the session manager, the socket handlers and the run endpoints to an app."""
    from console.server.runs import create_blueprint

    socketio: SocketIO = app.extensions["socketio"]
    cfg, store = app.extensions["config"], app.extensions["store"]

    def broadcast(notebook_id: str, events: list[dict[str, Any]]) -> None:
        for event in events:
            socketio.emit("event", event, to=room(notebook_id), namespace=NAMESPACE)

    # Flask config keys for tests: KERNEL_ENV, extra environment for kernel processes;
    # RAY_HEAD_OWNER=False when the data dir's embedded Ray head belongs to someone else.
    kernel_env = app.config.get("KERNEL_ENV") or {}
    holder = ManagerHolder(lambda: SessionManager(cfg, store, broadcast, kernel_env=kernel_env),
                           owns_ray=bool(app.config.get("RAY_HEAD_OWNER", True)))
    app.extensions[SESSIONS_KEY] = holder
    atexit.register(holder.shutdown)
    socketio.on_event("connect", _connect, namespace=NAMESPACE)
    socketio.on_event("command", _command, namespace=NAMESPACE)
    app.register_blueprint(create_blueprint())
    app.wsgi_app = _no_delay(app.wsgi_app)  # type: ignore[method-assign]


def _connect(auth_data: Any = None) -> bool:
    # A known user, and with a login cookie the CSRF token in the auth payload (console/server/auth.py).
    return auth.allow_socket(auth_data)


def _command(data: Any) -> dict[str, Any]:
    try:
        if not isinstance(data, dict):
            raise ApiError(400, "a command is a JSON object with a 'type'")
        try:
            msg = from_wire(data)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from exc
        handler = _HANDLERS.get(type(msg))
        if handler is None:
            raise ApiError(400, f"{msg.type} is not a command")
        return {"ok": True, **handler(msg)}
    except ApiError as exc:
        return {"ok": False, "status": exc.status, "error": exc.message}
    except Exception as exc:  # noqa: BLE001 - store errors carry their status; others are 500s
        status = getattr(exc, "status", None)
        if isinstance(status, int):
            return {"ok": False, "status": status, "error": getattr(exc, "message", str(exc))}
        log.exception("socket command failed")
        return {"ok": False, "status": 500, "error": "internal server error (the server log has the details)"}


def _check_map(name: str, value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in value.items()):
        raise ApiError(400, f"{name!r} must map run ids to integers")
    return value


def _join(msg: Message) -> dict[str, Any]:
    assert isinstance(msg, JoinCommand)
    require(msg.notebook_id, "viewer")
    since, metrics_since = _check_map("since", msg.since), _check_map("metrics_since", msg.metrics_since)
    manager = get_manager()
    # Under the notebook's lock no batch is stored or broadcast: the replay ends exactly where
    # the live stream this viewer gets after join_room begins.
    with manager.locks(msg.notebook_id):
        events = manager.replay(msg.notebook_id, since, metrics_since)
        for event in events:
            emit("event", event.to_wire(), to=request.sid)  # type: ignore[attr-defined]
        join_room(room(msg.notebook_id))
    return {"replayed": len(events)}


def _leave(msg: Message) -> dict[str, Any]:
    assert isinstance(msg, LeaveCommand)
    leave_room(room(msg.notebook_id))
    return {}


def _run(msg: Message) -> dict[str, Any]:
    assert isinstance(msg, (RunCellCommand, RunAllCommand, RunFromCommand))
    user, _ = require(msg.notebook_id, "runner")
    mode = {RunCellCommand: "cell", RunAllCommand: "all", RunFromCommand: "from"}[type(msg)]
    ids = get_manager().run(user.id, msg.notebook_id, mode, getattr(msg, "cell_id", None))
    return {"run_ids": ids}


def _interrupt(msg: Message) -> dict[str, Any]:
    assert isinstance(msg, InterruptCommand)
    user, _ = require(msg.notebook_id, "runner")
    return get_manager().interrupt(user.id, msg.notebook_id)


def _restart(msg: Message) -> dict[str, Any]:
    assert isinstance(msg, RestartCommand)
    user, _ = require(msg.notebook_id, "runner")
    get_manager().restart(user.id, msg.notebook_id)
    return {}


_HANDLERS: dict[type, Callable[[Message], dict[str, Any]]] = {
    JoinCommand: _join, LeaveCommand: _leave, RunCellCommand: _run, RunAllCommand: _run,
    RunFromCommand: _run, InterruptCommand: _interrupt, RestartCommand: _restart,
}
