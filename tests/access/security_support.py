"""Helpers of the security tests: multi-user apps and logged-in clients."""
from __future__ import annotations
from collections.abc import Iterator
from typing import Any
import pytest
from flask import Flask
from flask.testing import FlaskClient
from console.config import Config
from console.server.auth import CSRF_HEADER, hash_password


PASSWORD = "correct horse battery"


USERS = ("alice", "vera", "rudy", "eddie", "mallory")  # owner, viewer, runner, editor, no role


def make_app(cfg: Config, **settings: Any) -> Flask:
    from console.server import create_app

    app = create_app({**cfg, "TESTING": True, "SINGLE_USER": False, **settings})
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
