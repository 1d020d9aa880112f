"""WSGI middleware every server of the app gets (gunicorn, the dev server, the tests' servers)."""
from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


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
