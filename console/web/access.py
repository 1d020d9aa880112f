"""Who may do what to a notebook: owner, or a share on it or on a folder above it (simple first cut).

Roles rank viewer < runner < editor < owner; admins may do everything. The security work refines
this (links, forks); callers only ever ask `can(user, notebook, role)`.
"""
from __future__ import annotations

from typing import Any

ROLE_RANK = {"viewer": 1, "runner": 2, "editor": 3, "owner": 4}


def role_of(store: Any, user: Any, notebook: Any) -> str | None:
    """The strongest role `user` has on `notebook` (a NotebookInfo), or None."""
    from console.store.paths import is_under

    if user is None:
        return None
    if getattr(user, "is_admin", False) or notebook.owner_id == user.id:
        return "owner"
    best: str | None = None
    for share in store.list_shares(user_id=user.id):
        applies = share.notebook_id == notebook.id or (
            share.folder_path is not None and is_under(notebook.folder, share.folder_path))
        if applies and (best is None or ROLE_RANK[share.role] > ROLE_RANK[best]):
            best = share.role
    return best


def can(user: Any, notebook: Any, role: str, store: Any = None) -> bool:
    if store is None:
        from .deps import get_store

        store = get_store()
    have = role_of(store, user, notebook)
    return have is not None and ROLE_RANK[have] >= ROLE_RANK[role]


def require(notebook_id: str, role: str) -> tuple[Any, Any]:
    """(user, notebook) when the current user has `role` on the notebook; ApiError 401/403 otherwise."""
    from . import auth
    from .deps import get_store
    from .errors import ApiError

    store = get_store()
    nb = store.get_notebook_info(notebook_id)  # NotFound -> 404
    user = auth.current_user()
    if user is None:
        raise ApiError(401, "log in first")
    if not can(user, nb, role, store):
        raise ApiError(403, f"you need the {role} role on this notebook")
    return user, nb
