"""Production serving: gunicorn, run in-process, with one gthread worker and many threads.

One worker because Socket.IO rooms and the session registry live in that process (scale-out
goes through a Socket.IO message queue, not more workers); threads serve concurrent requests
and hold the websockets: each open websocket keeps one thread for its whole life. So sockets
may take at most `threads - http_reserve(threads)` threads (console/server/wsgi.py refuses the
next with 503), and the rest always serve plain HTTP. DEFAULT_THREADS holds ~900 sockets;
bench/sockets_load.py and docs/performance.md have the figures behind it.
"""
from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication

from console.server.deps import SESSIONS_KEY
from console.server.jobs.scheduler import JOBS_KEY
from console.server.wsgi import SOCKET_LIMIT_KEY

DEFAULT_THREADS = 1024


def http_reserve(threads: int) -> int:
    """Threads kept for plain HTTP, whatever the sockets want."""
    return max(8, threads // 8)


def _post_fork(_arbiter: Any, worker: Any) -> None:
    # The app (and its database pool) was built before the fork; the worker must not share the
    # parent's connections, so it drops them without closing them under the parent's feet.
    app = worker.app.application
    store = app.extensions.get("store")
    if store is not None:
        store.engine.dispose(close=False)
    # Start the kernel manager now, not at the first request: it closes the runs a killed server
    # left `running` (and trims their log files), which the API must not show as still going.
    holder = app.extensions.get(SESSIONS_KEY)
    if holder is not None:
        holder.get()
    # Jobs fire in the worker that runs kernels, never in the arbiter that forked it.
    scheduler = app.extensions.get(JOBS_KEY)
    if scheduler is not None:
        scheduler.start()


class GunicornServer(BaseApplication):
    def __init__(self, app: Any, host: str, port: int, threads: int = DEFAULT_THREADS) -> None:
        if threads < 2 * http_reserve(threads):
            raise ValueError(f"serve needs at least {2 * http_reserve(threads)} threads (got {threads})")
        self.application = app
        app.extensions[SOCKET_LIMIT_KEY] = threads - http_reserve(threads)
        self.options = {
            "bind": f"{host}:{port}",
            "workers": 1,
            "worker_class": "gthread",
            "threads": threads,
            # Connections the worker accepts at once (gunicorn's default 1000): every thread busy
            # plus idle keep-alive connections.
            "worker_connections": threads * 2,
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
