"""The settler: turns each notebook's burst of edits into one revision once it has been idle.

Co-editing and autosave save without a history row (console/store/revisions.py); this thread
asks the store every few seconds for notebooks idle for HISTORY_SETTLE_SECONDS and snapshots
them. It starts at the first request of the serving process (gunicorn forks after create_app, and
a thread does not survive a fork) and stops when its app is gone, its store is closed, or
`stop_settler` is called. It reads the time on the app's clock (console/clock.py), so a test moves
time past the idle seconds instead of waiting for them. Its rounds are paced on real time, not on
that clock: a test's MovableClock counts its sleepers (`wait_sleeping`), and the tests that move it
for the saver or the scheduler count theirs only.
"""
from __future__ import annotations

import logging
import os
import threading
import weakref
from typing import Any

from flask.sansio.app import App  # what a blueprint's record_once hands over (a Flask app is one)

from console.clock import Clock, app_clock

log = logging.getLogger(__name__)

SETTLER_KEY = "console.history_settler"


class Settler:
    def __init__(self, app: App, idle_seconds: float, clock: Clock) -> None:
        self.idle_seconds = max(float(idle_seconds), 0.0)
        self.clock = clock
        # Often enough that a revision follows the idle time closely, seldom enough to cost nothing.
        self.every = min(max(self.idle_seconds / 4, 0.2), 5.0)
        self._app = weakref.ref(app)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._pid = 0
        self._thread: threading.Thread | None = None
        self._pool: Any = None  # the store's connection pool when the thread started

    def ensure_running(self) -> None:
        with self._lock:
            if self._pid == os.getpid() and self._thread is not None and self._thread.is_alive():
                return
            self._pid = os.getpid()
            app = self._app()
            self._pool = app.extensions["store"].engine.pool if app is not None else None
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="history-settler", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def settle_once(self) -> int:
        app = self._app()
        store: Any = app.extensions["store"] if app is not None else None
        # Gone, or closed (Store.close disposes the engine, which gives it a new pool): a closed
        # store must not be reopened behind its owner's back (SQLite would make a new file).
        if store is None or (self._pool is not None and store.engine.pool is not self._pool):
            self._stop.set()
            return 0
        return len(store.settle_notebooks(self.idle_seconds, now=self.clock.now()))

    def _loop(self) -> None:
        failing = False
        while not self._stop.wait(self.every):
            try:
                self.settle_once()
                failing = False
            except Exception:  # a busy or closed database: try again next round, saying so once
                if not failing:
                    log.exception("settling notebook history failed (retrying every %.1f s)", self.every)
                failing = True


def init_settler(app: App) -> None:
    """Give the app a settler that starts with its first request."""
    if SETTLER_KEY in app.extensions:
        return
    settler = Settler(app, app.extensions["config"].HISTORY_SETTLE_SECONDS, app_clock(app))
    app.extensions[SETTLER_KEY] = settler
    app.before_request(settler.ensure_running)


def stop_settler(app: App) -> None:
    settler = app.extensions.get(SETTLER_KEY)
    if settler is not None:
        settler.stop()
