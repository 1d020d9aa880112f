"""Fixtures for the security tests: a multi-user app (no single-user mode), users with passwords,
logged-in test clients, and the real session manager, so an authorized "run" starts a real kernel.

`login(app, name)` logs in through POST /api/login like the browser does and returns a client
that sends the session's CSRF token on every request.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from security_support import PASSWORD, USERS, Served, make_app, login  # noqa: F401
from flask import Flask
from flask.testing import FlaskClient

from console.config import Config


@pytest.fixture
def mu_app(cfg: Config) -> Iterator[Flask]:
    app = make_app(cfg)
    yield app
    app.extensions["sessions"].shutdown()  # the kernels that authorized runs started
    app.extensions["store"].close()


@pytest.fixture
def as_user(mu_app: Flask) -> Any:
    """as_user("alice") -> a logged-in client (cached per name)."""
    clients: dict[str, FlaskClient] = {}

    def get(name: str) -> FlaskClient:
        if name not in clients:
            clients[name] = login(mu_app, name)
        return clients[name]

    return get


@pytest.fixture
def served(mu_app: Flask) -> Iterator[Served]:
    """mu_app behind a real threaded HTTP server on loopback (sockets and concurrency need one)."""
    server = Served(mu_app)
    yield server
    server.close()


@pytest.fixture
def served_url(served: Served) -> str:
    return served.url
