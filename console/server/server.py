"""Production serving: gunicorn, run in-process, with one gthread worker and many threads.

One worker because Socket.IO rooms and the session registry live in that process (scale-out
goes through a Socket.IO message queue, not more workers); threads serve concurrent requests
and hold the websockets.
"""
from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication


def _post_fork(_arbiter: Any, worker: Any) -> None:
    # The app (and its database pool) was built before the fork; the worker must not share the
    # parent's connections, so it drops them without closing them under the parent's feet.
    store = worker.app.application.extensions.get("store")
    if store is not None:
        store.engine.dispose(close=False)


class GunicornServer(BaseApplication):
    def __init__(self, app: Any, host: str, port: int, threads: int = 64) -> None:
        self.application = app
        self.options = {
            "bind": f"{host}:{port}",
            "workers": 1,
            "worker_class": "gthread",
            "threads": threads,
            # Websockets stay open for hours; the gthread worker must not time them out.
            "timeout": 0,
            "graceful_timeout": 15,
            "accesslog": "-",
            # gunicornc's control socket lives at one fixed path per user; two servers would clash.
            "control_socket_disable": True,
            "post_fork": _post_fork,
        }
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.application
