"""What a request handler needs from the app: the store and the config, kept on app.extensions."""
from __future__ import annotations

from flask import current_app

from console.config import Config
from console.store import Store

STORE_KEY = "store"
CONFIG_KEY = "config"


def get_store() -> Store:
    return current_app.extensions[STORE_KEY]  # type: ignore[no-any-return]


def get_config() -> Config:
    return current_app.extensions[CONFIG_KEY]  # type: ignore[no-any-return]
