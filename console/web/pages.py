"""The browser's pages: the single-page frontend served at / and /notebooks/<id>."""
from __future__ import annotations

from flask import Blueprint, current_app, send_from_directory
from flask.typing import ResponseReturnValue


def index(notebook_id: str | None = None) -> ResponseReturnValue:
    # One HTML page for every route; the frontend reads the notebook id from the URL.
    resp = send_from_directory(current_app.static_folder or "", "index.html")
    resp.headers["Cache-Control"] = "no-cache"
    return resp


def create_blueprint() -> Blueprint:
    bp = Blueprint("pages", __name__)
    bp.add_url_rule("/", "index", index, methods=["GET"])
    bp.add_url_rule("/notebooks/<notebook_id>", "notebook", index, methods=["GET"])
    return bp
