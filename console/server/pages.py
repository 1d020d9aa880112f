"""The browser's pages: the single-page frontend at / and /notebooks/<id>, and the login page.

Without a login (and outside single-user mode) the frontend's pages redirect to /login?next=...
"""
from __future__ import annotations

from urllib.parse import quote

from flask import Blueprint, current_app, redirect, request, send_from_directory
from flask.typing import ResponseReturnValue

from console.server.auth import current_user


def _static_page(name: str) -> ResponseReturnValue:
    resp = send_from_directory(current_app.static_folder or "", name)
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Frame-Options"] = "DENY"  # no clickjacking of the editor or the login form
    return resp


def index(notebook_id: str | None = None) -> ResponseReturnValue:
    # One HTML page for every route; the frontend reads the notebook id from the URL.
    if current_user() is None:
        return redirect("/login?next=" + quote(request.full_path.rstrip("?"), safe=""))
    return _static_page("index.html")


def login_page() -> ResponseReturnValue:
    return _static_page("login.html")


def create_blueprint() -> Blueprint:
    bp = Blueprint("pages", __name__)
    bp.add_url_rule("/", "index", index, methods=["GET"])
    bp.add_url_rule("/notebooks/<notebook_id>", "notebook", index, methods=["GET"])
    bp.add_url_rule("/login", "login", login_page, methods=["GET"])
    return bp
