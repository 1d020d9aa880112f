"""Fixtures for the security tests: a multi-user app (no single-user mode), users with passwords,
logged-in test clients, and a session manager stub so "run" is authorized without starting kernels.

`login(app, name)` logs in through POST /api/login like the browser does and returns a client
that sends the session's CSRF token on every request.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from console.config import Config
from console.web.auth import CSRF_HEADER, hash_password

PASSWORD = "correct horse battery"
USERS = ("alice", "vera", "rudy", "eddie", "mallory")  # owner, viewer, runner, editor, no role


class StubManager:
    """Stands in for SessionManager: records what authorized callers asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def run(self, user_id: Any, notebook_id: str, mode: str = "cell", cell_id: str | None = None) -> list[str]:
        self.calls.append(("run", user_id, notebook_id, mode, cell_id))
        return ["stub-run"]

    def interrupt(self, user_id: Any, notebook_id: str) -> dict[str, Any]:
        self.calls.append(("interrupt", user_id, notebook_id))
        return {"interrupted": None, "cancelled": []}

    def restart(self, user_id: Any, notebook_id: str) -> None:
        self.calls.append(("restart", user_id, notebook_id))

    def sessions_of(self, notebook_id: str) -> list[Any]:
        return []

    def locks(self, notebook_id: str) -> Any:
        return contextlib.nullcontext()

    def replay(self, notebook_id: str, since: Any, metrics_since: Any) -> list[Any]:
        return []


class StubHolder:
    def __init__(self) -> None:
        self.manager = StubManager()

    def get(self) -> StubManager:
        return self.manager

    def shutdown(self) -> None:
        pass


def make_app(cfg: Config, **settings: Any) -> Flask:
    from console.web import create_app

    app = create_app({**cfg, "TESTING": True, "SINGLE_USER": False, **settings})
    app.extensions["sessions"] = StubHolder()
    store = app.extensions["store"]
    for name in USERS:
        store.create_user(name, hash_password(PASSWORD))
    return app


def login(app: Flask, name: str, password: str = PASSWORD, **kw: Any) -> FlaskClient:
    client = app.test_client(**kw)
    r = client.post("/api/login", json={"username": name, "password": password})
    assert r.status_code == 200, r.json
    client.environ_base[f"HTTP_{CSRF_HEADER.upper().replace('-', '_')}"] = r.json["csrf_token"]
    client.csrf_token = r.json["csrf_token"]  # type: ignore[attr-defined]
    return client


@pytest.fixture
def mu_app(cfg: Config) -> Iterator[Flask]:
    app = make_app(cfg)
    yield app
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
