"""Helpers of the security tests: multi-user apps and logged-in clients."""
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
