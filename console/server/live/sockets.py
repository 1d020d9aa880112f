"""The Socket.IO namespace: join a notebook's room (stored output replayed, then live), run commands.

Who may send which command is the policy table's (console/server/access.py, rows `socket:<type>`),
applied to every command before its handler; this module names no role.

Wire: the browser emits `command` with a to_wire() dict of a *Command (console/wire/browser.py)
and gets an ack `{ok: true, ...}` or `{ok: false, status, error}`; the server emits `event` with a
to_wire() dict of an *Event to the room `notebook:<id>`. docs/protocol.md has the details. The
browser vocabulary's decoder checks every field's type and size first: a command that is not
what it says is a 400 before the policy table or a handler sees it.

Live co-editing (doc_sync, doc_update, awareness) is console/server/live/coedit.py's; the handlers
here pass the socket's id and the sender's account along (its own updates are not echoed).

Sockets from nobody never get this far (console/server/wsgi.py `socket_gate` refuses them before
Engine.IO holds anything). Each socket and the rooms it joins are registered in
console/server/live/membership.py, so logout and share changes take it out of rooms at once.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask, current_app, request
from flask_socketio import SocketIO, emit, join_room, leave_room

from console.wire.browser import (
    AwarenessCommand,
    DocSyncCommand,
    DocUpdateCommand,
    InterruptCommand,
    JoinCommand,
    LeaveCommand,
    RestartCommand,
    RunAllCommand,
    RunCellCommand,
    RunFromCommand,
    WatchJobsCommand,
    decode_command,
)
from console.wire.codec import DecodeError, Message

from console.server import auth
from console.server.live.coedit import COEDIT_KEY, CoEdit, CoEditError
from console.server.access import authorize_command, can, command_types
from console.server.deps import get_manager
from console.server.errors import ApiError, error_body
from console.server.jobs.jobs import checked_params
from console.server.live.membership import NAMESPACE, init_registry, registry, room
from console.server.api.runs import start as start_run
from console.server.wsgi import socket_gate


def broadcaster(socketio: SocketIO) -> Callable[[str, list[dict[str, Any]]], None]:
    """What the kernel manager calls to send a notebook's events to everyone in its room."""

    def broadcast(notebook_id: str, events: list[dict[str, Any]]) -> None:
        for event in events:
            socketio.emit("event", event, to=room(notebook_id), namespace=NAMESPACE)

    return broadcast


def init_sockets(app: Flask) -> None:
    """Attach the notebook namespace's handlers to the app's Socket.IO server.

    Every command needs a row in the policy table (console/server/access.py) and every row a
    handler here: a mismatch is a programming error, so the app refuses to start.
    """
    handled = {cls.type for cls in _HANDLERS}
    if handled != command_types(app):
        raise RuntimeError(f"socket commands {sorted(handled)} and their policies {sorted(command_types(app))} differ")
    socketio: SocketIO = app.extensions["socketio"]
    init_registry(app, _may_view)
    socketio.on_event("connect", _connect, namespace=NAMESPACE)
    socketio.on_event("disconnect", _disconnect, namespace=NAMESPACE)
    socketio.on_event("command", _command, namespace=NAMESPACE)
    # Outside Socket.IO's own middleware (set up by SocketIO(app)): refused before Engine.IO runs.
    app.wsgi_app = socket_gate(app, app.wsgi_app)  # type: ignore[method-assign,assignment]  # Flask's own middleware idiom


def _connect(auth_data: Any = None) -> bool:
    # A known user, and with a login cookie the CSRF token in the auth payload (console/server/auth.py).
    if not auth.allow_socket(auth_data):
        return False
    user, session = auth.current_user(), auth.identity().session
    assert user is not None  # allow_socket refuses nobody
    registry().connected(request.sid, user.id, session.id if session else None)  # type: ignore[attr-defined]
    return True


def _may_view(user_id: int, notebook_id: str) -> bool:
    """Whether the user may view the notebook now, from the store as it is now."""
    from console.store import NotFound

    # A fresh app context: the check must not reuse grants cached earlier in this request or
    # socket event (console/server/access.py caches them per context, and they may just have changed).
    with current_app.app_context():
        store = current_app.extensions["store"]
        try:
            user = store.get_user(user_id)
            notebook = store.get_notebook_info(notebook_id)
        except NotFound:  # the user or the notebook is gone: nothing left to view
            return False
        return can(user, notebook, "viewer", store)


def _disconnect(*_reason: Any) -> None:
    registry().disconnected(request.sid)  # type: ignore[attr-defined]
    _coedit().left(request.sid)  # type: ignore[attr-defined]


def _coedit() -> CoEdit:
    coedit: CoEdit = current_app.extensions[COEDIT_KEY]
    return coedit


def _command(data: Any = None, *_extra: Any) -> dict[str, Any]:
    # `data` defaults: a client may emit `command` with no argument, which must get an error ack.
    try:
        try:
            msg = decode_command(data)
        except DecodeError as exc:
            raise ApiError(exc.status, exc.message) from None
        # The policy table decides first; a message type without a row (an event, the kernel's
        # execute) is refused there, so only commands with a policy reach a handler.
        user = authorize_command(msg.type, getattr(msg, "notebook_id", None))
        return {"ok": True, **_HANDLERS[type(msg)](msg, user)}
    except CoEditError as exc:
        return {"ok": False, **error_body(ApiError(exc.status, exc.message))}
    except Exception as exc:  # the HTTP API's mapping: the same status, message and fields
        return {"ok": False, **error_body(exc)}


def _join(msg: JoinCommand, user: Any) -> dict[str, Any]:
    since, metrics_since = msg.since, msg.metrics_since
    manager = get_manager()
    # Under the notebook's lock no batch is stored or broadcast: the replay ends exactly where
    # the live stream this viewer gets after join_room begins.
    with manager.locks(msg.notebook_id):
        events = manager.replay(msg.notebook_id, since, metrics_since)
        for event in events:
            emit("event", event.to_wire(), to=request.sid)  # type: ignore[attr-defined]
        # Registered before entering the room: a revoke from now on finds it.
        registry().joined(request.sid, msg.notebook_id)  # type: ignore[attr-defined]
        join_room(room(msg.notebook_id))
    # A revoke between the policy check and the registration above found nothing to take away:
    # check once more, now that any later revoke will see this socket.
    if not _may_view(user.id, msg.notebook_id):
        _leave_room(msg.notebook_id)
        raise ApiError(403, "your access to this notebook was just removed")
    return {"replayed": len(events)}


def _leave(msg: LeaveCommand, user: Any) -> dict[str, Any]:
    _leave_room(msg.notebook_id)
    return {}


def _leave_room(notebook_id: str) -> None:
    registry().left(request.sid, notebook_id)  # type: ignore[attr-defined]
    leave_room(room(notebook_id))
    _coedit().left(request.sid, notebook_id)  # type: ignore[attr-defined]


def _watch_jobs(msg: WatchJobsCommand, user: Any) -> dict[str, Any]:
    """The Jobs page: jobs_changed for the jobs this user may see (console/server/live/jobwatch.py
    checks each event's notebook against the user's access when it is sent)."""
    registry().watch_jobs(request.sid)  # type: ignore[attr-defined]
    return {}


def _doc_sync(msg: DocSyncCommand, user: Any) -> dict[str, Any]:
    return _coedit().sync(msg.notebook_id, msg.state_vector, msg.epoch, request.sid)  # type: ignore[attr-defined]


def _doc_update(msg: DocUpdateCommand, user: Any) -> dict[str, Any]:
    _coedit().update(msg.notebook_id, msg.update, msg.epoch, user.id, request.sid)  # type: ignore[attr-defined]
    return {}


def _awareness(msg: AwarenessCommand, user: Any) -> dict[str, Any]:
    # Presence is for the pages in the room: a socket that has not joined has no one to be present to.
    if msg.notebook_id not in registry().rooms_of(request.sid):  # type: ignore[attr-defined]
        raise ApiError(403, "join the notebook before sending awareness")
    _coedit().awareness(msg.notebook_id, request.sid, msg.client_id, msg.update,  # type: ignore[attr-defined]
                        {"id": user.id, "name": user.display_name or user.username})
    return {}


def _run(msg: RunCellCommand | RunAllCommand | RunFromCommand, user: Any) -> dict[str, Any]:
    mode = {RunCellCommand: "cell", RunAllCommand: "all", RunFromCommand: "from"}[type(msg)]
    # The page's parameter form, checked as POST /run's params are (a name not declared: 400).
    params = checked_params(msg.notebook_id, dict(msg.params)) if msg.params else None
    return {"run_ids": start_run(user.id, msg.notebook_id, mode, getattr(msg, "cell_id", None), params=params,
                                 sources=msg.sources)}


def _interrupt(msg: InterruptCommand, user: Any) -> dict[str, Any]:
    return get_manager().interrupt(user.id, msg.notebook_id)


def _restart(msg: RestartCommand, user: Any) -> dict[str, Any]:
    get_manager().restart(user.id, msg.notebook_id)
    return {}


# The commands of the namespace; each gets the user its policy row let through.
_HANDLERS: dict[type[Message], Callable[[Any, Any], dict[str, Any]]] = {
    JoinCommand: _join, LeaveCommand: _leave, RunCellCommand: _run, RunAllCommand: _run,
    RunFromCommand: _run, InterruptCommand: _interrupt, RestartCommand: _restart,
    DocSyncCommand: _doc_sync, DocUpdateCommand: _doc_update, AwarenessCommand: _awareness,
    WatchJobsCommand: _watch_jobs,
}
