"""WSGI middleware every server of the app gets (gunicorn, the dev server, the tests' servers)."""
from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment
    from flask import Flask

log = logging.getLogger(__name__)

# app.extensions key: how many Socket.IO requests (websockets, long polls) may be open at once;
# the server sets it (console/server/server.py) where each one holds a thread. None: no limit.
SOCKET_LIMIT_KEY = "console.socket_limit"
SOCKET_PATH = "/socket.io"


def no_delay(wsgi_app: WSGIApplication) -> WSGIApplication:
    """Turn off Nagle's algorithm on each connection before the app (and a websocket) uses it.

    Events are small frames written one after another; with Nagle on, the second of them waits
    for the client's delayed ACK, and a warm cell's result arrived 40 ms late.
    """

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        sock = environ.get("werkzeug.socket") or environ.get("gunicorn.socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass  # not TCP (a unix socket): nothing to tune
        return wsgi_app(environ, start_response)

    return app


def _refuse(start_response: StartResponse, status: str, message: str, headers: list[tuple[str, str]]) -> list[bytes]:
    body = json.dumps({"error": message}).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                            ("Connection", "close"), *headers])
    return [body]


def socket_gate(flask_app: Flask, wsgi_app: WSGIApplication) -> WSGIApplication:
    """Socket.IO requests from nobody are refused before Engine.IO sees them, and the open ones are capped.

    Engine.IO accepts a handshake and an upgrade before Socket.IO's connect handler checks the
    login, and a websocket holds a server thread for its whole life: 64 cookie-less websockets
    once stopped every HTTP request. Here, before anything is held: no known user (no valid
    session cookie, not single-user mode) -> 401; already as many open Socket.IO requests as the
    server allows (SOCKET_LIMIT_KEY, threads minus a reserve for HTTP) -> 503, so plain HTTP
    always finds a free thread. The CSRF token travels in Socket.IO's connect packet, after this
    point, and is checked there (console/server/auth.py allow_socket).
    """
    from console.server import auth

    lock = threading.Lock()
    open_now = [0]

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path != SOCKET_PATH and not path.startswith(SOCKET_PATH + "/"):
            return wsgi_app(environ, start_response)
        try:
            with flask_app.request_context(environ):
                user: Any = auth.current_user()  # through the module: the tests' servers swap it
        except Exception:  # a broken store or cookie: nobody
            log.exception("resolving a socket's user failed")
            user = None
        if user is None:
            return _refuse(start_response, "401 UNAUTHORIZED", "log in first", [])
        limit = flask_app.extensions.get(SOCKET_LIMIT_KEY)
        with lock:
            if limit is not None and open_now[0] >= limit:
                full = True
            else:
                full = False
                open_now[0] += 1
        if full:
            log.warning("socket refused: %d Socket.IO requests open, the limit", limit)
            return _refuse(start_response, "503 SERVICE UNAVAILABLE", "too many open sockets; try again later",
                           [("Retry-After", "5")])
        try:
            # A websocket runs inside this call until it closes (threading mode), a long poll
            # until it answers: both count while they hold their thread.
            return wsgi_app(environ, start_response)
        finally:
            with lock:
                open_now[0] -= 1

    return app
