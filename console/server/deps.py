"""What a request handler needs from the app: the store, the config and the kernel manager, kept
on app.extensions.

The HTTP run endpoints (runs.py) and the Socket.IO namespace (sockets.py) both reach the kernels
through `get_manager()` here, so neither imports the other.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable

from flask import current_app

from console.cluster.head import own_embedded_head, stop_embedded
from console.config import Config
from console.protocols import KernelManager
from console.store import Store

STORE_KEY = "store"
CONFIG_KEY = "config"
SESSIONS_KEY = "sessions"


class ManagerHolder:
    """Starts the kernel manager at first use in the serving process (gunicorn forks after create_app).

    owns_ray: the server owns the data dir's embedded Ray head, which the kernels start at first
    need and share, and stops it on shutdown; False when the head belongs to someone else (tests).
    """

    def __init__(self, factory: Callable[[], KernelManager], owns_ray: bool = True) -> None:
        self._factory = factory
        self._owns_ray = owns_ray
        self._manager: KernelManager | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def get(self) -> KernelManager:
        with self._lock:
            if self._manager is None or self._pid != os.getpid():
                self._manager = self._factory().start()
                self._pid = os.getpid()
                if self._owns_ray:
                    own_embedded_head(self._manager.cfg)
            return self._manager

    def shutdown(self) -> None:
        with self._lock:
            manager, self._manager = self._manager, None
        if manager is None or self._pid != os.getpid():
            return
        manager.shutdown()
        if self._owns_ray:
            stop_embedded(manager.cfg)


def get_store() -> Store:
    return current_app.extensions[STORE_KEY]


def get_config() -> Config:
    return current_app.extensions[CONFIG_KEY]


def get_manager() -> KernelManager:
    return current_app.extensions[SESSIONS_KEY].get()
