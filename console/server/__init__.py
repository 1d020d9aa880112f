"""The web tier: `create_app(overrides)` builds a Flask app with the JSON API, the frontend's
pages and a Socket.IO server; nothing is created at import time.

Settings come from console.config (defaults, then CONSOLE_* env, then `overrides`); other
upper-case keys in `overrides` (TESTING, ...) go to Flask's own config. On app.extensions:
"store" (console.store.Store), "config" (console.config.Config), "socketio"
(flask_socketio.SocketIO, for console/server/sockets.py to attach handlers to).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Flask

from console.config import SETTINGS, load_config, ensure_secret_key

STATIC_DIR = Path(__file__).parent / "static"
_SETTING_NAMES = {s.name for s in SETTINGS}


def create_app(overrides: dict[str, Any] | None = None) -> Flask:
    from flask_socketio import SocketIO

    from console.store import Store

    from console.server.api import create_api
    from console.server.access import init_access
    from console.server.auth import init_auth
    from console.server.deps import CONFIG_KEY, STORE_KEY
    from console.server.errors import register_error_handler
    from console.server.pages import create_blueprint as create_pages
    from console.server.publish import create_blueprint as create_publish
    from console.server.sharing import create_blueprint as create_sharing

    overrides = dict(overrides or {})
    flask_overrides = {k: overrides.pop(k) for k in list(overrides) if k not in _SETTING_NAMES}
    cfg = load_config(overrides)
    cfg.data_dir.mkdir(parents=True, exist_ok=True)

    app = Flask("console.server", static_folder=str(STATIC_DIR), static_url_path="/static")
    app.config.update(
        SECRET_KEY=ensure_secret_key(cfg),
        MAX_CONTENT_LENGTH=cfg.MAX_BODY_BYTES,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
    )
    app.config.update(flask_overrides)
    app.json.sort_keys = False  # type: ignore[attr-defined]

    store = Store(cfg.database_url)
    app.extensions[STORE_KEY] = store
    app.extensions[CONFIG_KEY] = cfg
    init_auth(app, store)  # the CSRF check runs first, then the endpoint's access policy
    init_access(app)

    register_error_handler(app)
    app.register_blueprint(create_api())
    app.register_blueprint(create_pages())
    app.register_blueprint(create_sharing())
    app.register_blueprint(create_publish())

    # Socket.IO registers itself as app.extensions["socketio"]; console/server/sockets.py adds the
    # notebook namespace. Threading mode: gunicorn's gthread worker or the dev server.
    SocketIO(app, async_mode="threading", max_http_buffer_size=cfg.MAX_BODY_BYTES)
    from console.server.sockets import init_sessions

    init_sessions(app)  # kernels, run endpoints and the notebook namespace (console/server/kernels.py)
    return app
