"""The user docs of the repository's docs/ folder, served as pages of the app.

    GET /docs/<name>      -> the docs page (frontend/src/docs.js renders the markdown)
    GET /api/docs/<name>  -> {name, markdown}

`name` is a file name of docs/ without `.md` (`language` for docs/language.md). The names are
listed once, when the app is built, and a request only ever picks one of them: nothing from the
URL reaches a file path, so `..`, slashes or other files of the server are a 404 like any unknown
name. Completion and hover docs (console/kernel/completion_byzer.py) link here. Without a docs/
folder next to the package (an installed wheel, the Docker image) the list is empty.
"""
from __future__ import annotations

import re
from pathlib import Path

from flask import Blueprint, Flask, current_app, jsonify
from flask.typing import ResponseReturnValue

from console.server.errors import ApiError

DOCS_KEY = "console.user_docs"
DOCS_DIR = Path(__file__).resolve().parents[3] / "docs"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")  # what a listed file's name looks like (no dots, no slashes)


def list_docs(folder: Path = DOCS_DIR) -> dict[str, Path]:
    """name -> file of every `<name>.md` directly in `folder` (a regular file, not a link)."""
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.md"))
            if _NAME.fullmatch(p.stem) and p.is_file() and not p.is_symlink()}


def _doc(name: str) -> Path:
    path = current_app.extensions[DOCS_KEY].get(name)
    if path is None:
        known = ", ".join(current_app.extensions[DOCS_KEY]) or "none on this server"
        raise ApiError(404, f"no docs page {name!r} (the docs are: {known})")
    return path


def page(name: str) -> ResponseReturnValue:
    from console.server.auth import current_user
    from console.server.pages import index

    if current_user() is not None:  # anonymous callers go to the login first, whatever the name
        _doc(name)
    return index()


def markdown(name: str) -> ResponseReturnValue:
    return jsonify({"name": name, "markdown": _doc(name).read_text(encoding="utf-8")})


def create_blueprint() -> Blueprint:
    bp = Blueprint("docs", __name__)
    bp.add_url_rule("/docs/<name>", "page", page, methods=["GET"])
    bp.add_url_rule("/api/docs/<name>", "markdown", markdown, methods=["GET"])
    return bp


def init_docs(app: Flask, folder: Path = DOCS_DIR) -> None:
    app.extensions[DOCS_KEY] = list_docs(folder)
    app.register_blueprint(create_blueprint())
