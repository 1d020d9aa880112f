"""Whose each open socket is and which notebook rooms it joined, so that losing access takes effect at once.

The policy table checks `join` once; after that a socket in a notebook's room gets every event
of the notebook until it leaves. So console/server/live/sockets.py registers each socket here (its
user, its login session) and each room it joins, and the code that takes access away calls
`revoke`:

- logout (console/server/auth.py): `revoke(session_id=...)` disconnects the sockets of that login;
  a password change: `disconnect_user(user_id, keep_session=...)` those of the user's other logins;
- a share removed or changed, a role lowered (console/server/api/sharing.py):
  `revoke(user_id=..., notebook_id=...)` re-checks those sockets' rooms against the policy
  (the viewer check console/server/live/sockets.py registers, console/server/access.py's `can`) and
  takes them out of each room they may no longer view; each such socket gets a `revoked` event
  `{notebook_id}`. Without arguments every joined socket is re-checked (a folder share touches
  many notebooks).

This module imports neither auth, sharing nor access (auth and sharing call it, access imports
auth), so no import circle forms; the access check comes in through `init_registry`.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, current_app

log = logging.getLogger(__name__)

REGISTRY_KEY = "console.socket_registry"
NAMESPACE = "/"
REVOKED_EVENT = "revoked"


def room(notebook_id: str) -> str:
    return f"notebook:{notebook_id}"


@dataclass
class _Socket:
    user_id: int
    session_id: str | None  # the login session's id (its token's hash); None in single-user mode
    notebooks: set[str] = field(default_factory=set)
    watches_jobs: bool = False  # the Jobs page's socket: gets jobs_changed (console/server/live/jobwatch.py)


class Registry:
    """Open sockets by Socket.IO sid: who, through which login, in which notebooks' rooms."""

    def __init__(self, may_view: Callable[[int, str], bool]) -> None:
        self.may_view = may_view  # (user id, notebook id) -> may that user view it now?
        self._lock = threading.Lock()
        self._sockets: dict[str, _Socket] = {}

    def connected(self, sid: str, user_id: int, session_id: str | None) -> None:
        with self._lock:
            self._sockets[sid] = _Socket(user_id, session_id)

    def disconnected(self, sid: str) -> None:
        with self._lock:
            self._sockets.pop(sid, None)

    def joined(self, sid: str, notebook_id: str) -> None:
        with self._lock:
            if sid in self._sockets:
                self._sockets[sid].notebooks.add(notebook_id)

    def left(self, sid: str, notebook_id: str) -> None:
        with self._lock:
            if sid in self._sockets:
                self._sockets[sid].notebooks.discard(notebook_id)

    def watch_jobs(self, sid: str) -> None:
        with self._lock:
            if sid in self._sockets:
                self._sockets[sid].watches_jobs = True

    def job_watchers(self) -> list[tuple[str, int]]:
        """(sid, user id) of each socket that sent watch_jobs."""
        with self._lock:
            return [(sid, s.user_id) for sid, s in self._sockets.items() if s.watches_jobs]

    def rooms_of(self, sid: str) -> set[str]:
        """The notebooks whose rooms the socket joined (and still may be in)."""
        with self._lock:
            sock = self._sockets.get(sid)
            return set(sock.notebooks) if sock else set()

    def count(self) -> int:
        with self._lock:
            return len(self._sockets)

    def of_session(self, session_id: str) -> list[str]:
        with self._lock:
            return [sid for sid, s in self._sockets.items() if s.session_id == session_id]

    def of_user(self, user_id: int, keep_session: str | None) -> list[str]:
        with self._lock:
            return [sid for sid, s in self._sockets.items()
                    if s.user_id == user_id and (keep_session is None or s.session_id != keep_session)]

    def memberships(self, user_id: int | None, notebook_id: str | None) -> list[tuple[str, int, str]]:
        """(sid, user id, notebook id) of every joined room matching the filters."""
        with self._lock:
            return [(sid, s.user_id, nb) for sid, s in self._sockets.items()
                    if user_id is None or s.user_id == user_id
                    for nb in s.notebooks if notebook_id is None or nb == notebook_id]


def init_registry(app: Flask, may_view: Callable[[int, str], bool]) -> Registry:
    registry = Registry(may_view)
    app.extensions[REGISTRY_KEY] = registry
    return registry


def registry() -> Registry:
    reg: Registry = current_app.extensions[REGISTRY_KEY]
    return reg


def revoke(*, session_id: str | None = None, user_id: int | None = None, notebook_id: str | None = None) -> int:
    """Apply an access change to open sockets now; returns how many sockets lost something.

    session_id: disconnect every socket of that login (logout). Otherwise re-check the rooms
    joined by `user_id`'s sockets (everyone's when None), on `notebook_id` (every notebook when
    None), and take each socket out of the rooms its user may no longer view.
    """
    app = current_app._get_current_object()  # type: ignore[attr-defined]  # werkzeug's LocalProxy
    reg: Registry | None = app.extensions.get(REGISTRY_KEY)
    socketio: Any = app.extensions.get("socketio")
    if reg is None or socketio is None:
        return 0
    if session_id is not None:
        return _disconnect(reg, socketio, reg.of_session(session_id))
    lost: set[str] = set()
    allowed: dict[tuple[int, str], bool] = {}
    for sid, uid, nb in reg.memberships(user_id, notebook_id):
        if (uid, nb) not in allowed:
            allowed[(uid, nb)] = reg.may_view(uid, nb)
        if allowed[(uid, nb)]:
            continue
        reg.left(sid, nb)
        socketio.server.leave_room(sid, room(nb), namespace=NAMESPACE)
        socketio.emit(REVOKED_EVENT, {"notebook_id": nb}, to=sid, namespace=NAMESPACE)
        lost.add(sid)
    if lost:
        log.info("access change: %d socket(s) left notebook rooms", len(lost))
    return len(lost)


def disconnect_user(user_id: int, keep_session: str | None = None) -> int:
    """Disconnect every socket of the user but those of `keep_session` (a password change logs the
    user out everywhere else); returns how many."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]  # werkzeug's LocalProxy
    reg: Registry | None = app.extensions.get(REGISTRY_KEY)
    if reg is None:
        return 0
    return _disconnect(reg, app.extensions["socketio"], reg.of_user(user_id, keep_session))


def _disconnect(reg: Registry, socketio: Any, sids: list[str]) -> int:
    for sid in sids:
        reg.disconnected(sid)
        # Leaves every room at once: no event of any notebook reaches it from here on.
        socketio.server.disconnect(sid, namespace=NAMESPACE)
    return len(sids)
