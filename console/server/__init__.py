"""The web tier: `create_app(overrides)` builds a Flask app with the JSON API, the frontend's
pages and a Socket.IO server; nothing is created at import time.

Settings come from console.config (defaults, then CONSOLE_* env, then `overrides`); other
upper-case keys in `overrides` (TESTING, ...) go to Flask's own config. On app.extensions:
"store" (console.store.Store), "config" (console.config.Config), "socketio"
(flask_socketio.SocketIO, for console/server/live/sockets.py to attach handlers to), "sessions"
(console/server/deps.py's ManagerHolder: the kernels, started at first use).

Runs in: the server process (`mlsql-console serve`).
"""
from __future__ import annotations

import atexit
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Flask

from console.cluster.sandbox import OFF_WARNING as SANDBOX_OFF_WARNING, SandboxUnavailable
from console.config import SETTINGS, ensure_secret_key, load_config, prepare_data_dir

if TYPE_CHECKING:
    from console.config import Config
    from console.store import Store

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).parent / "static"
SANDBOX_KEY = "console.sandbox"  # the startup's sandbox line (the CLI prints it)
__all__ = ["SANDBOX_KEY", "SANDBOX_OFF_WARNING", "SandboxUnavailable", "create_app"]
_SETTING_NAMES = {s.name for s in SETTINGS}


def create_app(overrides: dict[str, Any] | None = None, *, kernel_module: str = "console.kernel.main") -> Flask:
    """kernel_module: the kernel processes' entry module (tests run one with a scripted engine)."""
    from flask_socketio import SocketIO

    from console.store import Store

    from console.server.api import create_api
    from console.server.sessions import environments
    from console.server.access import init_access
    from console.cluster import ray_map, sandbox
    from console.server.auth import SINGLE_USER_KEY, init_auth
    from console.server.deps import CONFIG_KEY, STORE_KEY
    from console.server.errors import register_error_handler
    from console.server.pages import create_blueprint as create_pages
    from console.server.api.publish import create_blueprint as create_publish
    from console.server.api.runs import create_blueprint as create_runs
    from console.server.api.sharing import create_blueprint as create_sharing
    from console.server.live.sockets import init_sockets
    from console.server.wsgi import no_delay

    overrides = dict(overrides or {})
    flask_overrides = {k: overrides.pop(k) for k in list(overrides) if k not in _SETTING_NAMES}
    cfg = load_config(overrides)
    for moved in prepare_data_dir(cfg):  # the database and key out of user code's sight
        log.warning("moved into the server's private folder: %s", moved)
    environments.prune_layers(cfg)  # notebook environments unused for CONSOLE_ENV_KEEP_DAYS

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
    # Before any kernel can start: a login-mode server without the sandbox must not serve at all.
    app.extensions[SANDBOX_KEY] = sandbox.check_startup(cfg, login_mode=not app.extensions[SINGLE_USER_KEY])
    ray_map.from_settings(cfg)  # a bad CONSOLE_RAY_CLUSTER_MAP stops the start here, with the reason
    init_access(app)

    register_error_handler(app)
    app.register_blueprint(create_api())
    app.register_blueprint(create_pages())
    app.register_blueprint(create_sharing())
    app.register_blueprint(create_publish())
    app.register_blueprint(create_runs())
    from console.server.api.lake import create_blueprint as create_lake

    app.register_blueprint(create_lake())  # the data panel (console/server/api/lake.py)
    from console.server.api.running import create_blueprint as create_running

    app.register_blueprint(create_running())  # running sessions and Shut down (console/server/api/running.py)
    from console.server.api.dashboards import create_blueprint as create_dashboards

    app.register_blueprint(create_dashboards())  # dashboards of pinned results (console/server/api/dashboards.py)
    from console.server.api.userdocs import init_docs

    init_docs(app)  # the docs/ folder as pages (console/server/api/userdocs.py)

    # Socket.IO registers itself as app.extensions["socketio"]; console/server/live/sockets.py adds the
    # notebook namespace. Threading mode: gunicorn's gthread worker or the dev server.
    socketio = SocketIO(app, async_mode="threading", max_http_buffer_size=cfg.MAX_BODY_BYTES)
    init_sockets(app)
    from console.server.live.coedit import init_coedit

    atexit.register(init_coedit(app).stop)  # live documents with unstored edits are stored on exit
    _attach_kernels(app, cfg, store, socketio, kernel_module)
    from console.server.jobs.jobs import init_jobs

    atexit.register(init_jobs(app).stop)  # started by the serving process (console/server/server.py)
    app.after_request(_no_store_for_api)
    app.wsgi_app = no_delay(app.wsgi_app)  # type: ignore[method-assign,assignment]  # Flask's own middleware idiom
    return app


def _no_store_for_api(resp: Any) -> Any:
    """API answers are never kept: Back in a browser showed a notebook's old content and edits then
    conflicted with the user's own earlier ones. A handler's own Cache-Control stands."""
    from flask import request

    if request.path.startswith("/api/") and "Cache-Control" not in resp.headers:
        resp.headers["Cache-Control"] = "no-store"
    return resp


def _attach_kernels(app: Flask, cfg: Config, store: Store, socketio: Any, kernel_module: str) -> None:
    """The kernel manager behind the run endpoints and the socket, started at first use.

    Flask config keys for tests: KERNEL_ENV, extra environment for kernel processes;
    RAY_HEAD_OWNER=False when the data dir's embedded Ray head belongs to someone else.
    """
    from console.server.deps import SESSIONS_KEY, ManagerHolder
    from console.server.sessions.kernels import SessionManager
    from console.server.live.sockets import broadcaster

    broadcast = broadcaster(socketio)
    kernel_env = app.config.get("KERNEL_ENV") or {}
    holder = ManagerHolder(lambda: SessionManager(cfg, store, broadcast, kernel_env=kernel_env,
                                                  kernel_module=kernel_module),
                           owns_ray=bool(app.config.get("RAY_HEAD_OWNER", True)))
    app.extensions[SESSIONS_KEY] = holder
    atexit.register(holder.shutdown)
