"""Who is making the request. Until accounts exist, everyone is the local admin.

`current_user()` is the one indirection the rest of web/ calls; the security work replaces its
body (session cookie -> user) without touching the handlers.
"""
from __future__ import annotations

from flask import Flask, current_app, g

from console.store import Store, UserRecord

ADMIN_KEY = "console.admin_id"
ADMIN_NAME = "admin"


def init_auth(app: Flask, store: Store) -> None:
    """Create the local admin on first start and remember its id."""
    admin = store.ensure_user(ADMIN_NAME, display_name="Local admin", is_admin=True)
    app.extensions[ADMIN_KEY] = admin.id


def current_user() -> UserRecord:
    if "console_user" not in g:
        from .deps import get_store

        g.console_user = get_store().get_user(current_app.extensions[ADMIN_KEY])
    return g.console_user  # type: ignore[no-any-return]
