"""One error handler: JSON {error, status} for every failure, never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy.engine import make_url

from console.config import Config


def test_unhandled_exception_is_a_bare_500(app: Flask, caplog: pytest.LogCaptureFixture) -> None:
    @app.route("/api/boom")
    def boom() -> str:
        raise RuntimeError("secret internal detail")

    from console.server.access import classify

    classify(app, "boom", "public")
    r = app.test_client().get("/api/boom")
    assert r.status_code == 500
    assert r.json == {"error": "internal server error (the server log has the details)", "status": 500}
    body = r.get_data(as_text=True)
    assert "Traceback" not in body and "secret internal detail" not in body
    assert "secret internal detail" in caplog.text  # the log keeps it


@pytest.mark.parametrize("data, message", [
    ("{", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ("", "JSON object"),
    (b"\xff\xfe", "not valid JSON"),
])
def test_malformed_bodies(client, data, message: str) -> None:  # type: ignore[no-untyped-def]
    r = client.post("/api/notebooks", data=data, content_type="application/json")
    assert r.status_code == 400 and message in r.json["error"] and r.json["status"] == 400


@pytest.mark.parametrize("body, message", [
    ({}, "'name' is required"),
    ({"name": 3}, "'name' must be a string"),
    ({"name": "n", "cells": "x"}, "'cells' must be a list"),
    ({"name": "n", "cells": [{"kind": "scala", "source": ""}]}, "kind"),
    ({"name": "n", "folder": "/a/../b"}, "not allowed"),
    ({"name": "   "}, "empty"),
])
def test_wrong_types_and_values(client, body, message: str) -> None:  # type: ignore[no-untyped-def]
    r = client.post("/api/notebooks", json=body)
    assert r.status_code == 400 and message in r.json["error"]


def test_unknown_routes_and_methods(client) -> None:  # type: ignore[no-untyped-def]
    assert client.get("/api/nothing").json["status"] == 404
    r = client.patch("/api/notebooks")
    assert r.status_code == 405 and r.json["status"] == 405


def test_oversize_body_is_413(cfg: Config) -> None:
    from console.server import create_app

    app = create_app({**cfg, "MAX_BODY_BYTES": 1000})
    client = app.test_client()
    big = {"name": "n", "cells": [{"kind": "mlsql", "source": "x" * 2000}]}
    r = client.post("/api/notebooks", json=big)
    assert r.status_code == 413 and r.json == {"error": "request body is larger than the limit of 1000 bytes",
                                               "status": 413}
    assert client.get("/api/notebooks").json["notebooks"] == []
    app.extensions["store"].close()


def test_app_is_built_from_settings(app: Flask, cfg: Config) -> None:
    assert app.extensions["config"]["DATA_DIR"] == cfg["DATA_DIR"]
    # Wherever the settings put them (the database URL names its file; the key is under the data dir).
    assert Path(make_url(cfg.database_url).database or "").exists() and any(cfg.data_dir.rglob("secret_key"))
    assert app.extensions["socketio"].async_mode == "threading"
    assert app.config["MAX_CONTENT_LENGTH"] == cfg.MAX_BODY_BYTES
