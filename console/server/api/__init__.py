"""The JSON API under /api: one parent blueprint holding one blueprint per resource."""
from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from console.server.deps import get_store
from console.server.api import (
    cells, comments, complete, environment, folders, notebooks, outputs, results, revisions, search, transfer,
    workspace,
)


def _health() -> ResponseReturnValue:
    store = get_store()
    return jsonify({"status": "ok", "database": store.dialect})


def create_api() -> Blueprint:
    # Built per app: a module-level blueprint is shared state across app instances in tests.
    api = Blueprint("api", __name__, url_prefix="/api")
    api.add_url_rule("/health", "health", _health, methods=["GET"])
    for module in (transfer, notebooks, folders, cells, complete, results, revisions, workspace, outputs, search,
                   comments, environment):
        api.register_blueprint(module.create_blueprint())
    return api
