"""The browser's pages: the single-page frontend at / and /notebooks/<id>, and the login page.

Without a login (and outside single-user mode) the frontend's pages redirect to /login?next=...;
a `next` that is not a path on this site (console/server/auth.py's safe_next) is dropped there.

Every HTML response carries a Content-Security-Policy (`page_csp`): scripts only from this site
and never inline, so markup that slips into a page cannot run; images only from this site (and
data:/blob: URLs, which charts and outputs use) unless CONSOLE_MARKDOWN_REMOTE_IMAGES allows
other sites. The published page (console/server/api/publish.py) sets its own, stricter policy.
"""
from __future__ import annotations

from urllib.parse import quote

from flask import Blueprint, Response, current_app, redirect, request, send_from_directory
from flask.typing import ResponseReturnValue

from console.server.auth import current_user, safe_next


def page_csp(remote_images: bool) -> str:
    """The policy of the app's pages. Styles may be inline: the editor (CodeMirror) injects its own."""
    images = "'self' data: blob:" + (" https: http:" if remote_images else "")
    return ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            f"img-src {images}; connect-src 'self'; font-src 'self' data:; object-src 'none'; "
            "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def add_csp(resp: Response) -> Response:
    """after_request: a policy on every HTML response that has none of its own (redirects included)."""
    if resp.mimetype == "text/html" and "Content-Security-Policy" not in resp.headers:
        cfg = current_app.extensions["config"]
        resp.headers["Content-Security-Policy"] = page_csp(bool(cfg.MARKDOWN_REMOTE_IMAGES))
    return resp


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
    given = request.args.get("next")
    if given is not None and safe_next(given) != given:
        # Checked here as well as in the page (frontend/src/login.js): an off-site `next` never
        # reaches the browser's address bar.
        return redirect("/login")
    return _static_page("login.html")


def create_blueprint() -> Blueprint:
    bp = Blueprint("pages", __name__)
    bp.add_url_rule("/", "index", index, methods=["GET"])
    bp.add_url_rule("/notebooks/<notebook_id>", "notebook", index, methods=["GET"])
    bp.add_url_rule("/login", "login", login_page, methods=["GET"])
    bp.after_app_request(add_csp)
    return bp
