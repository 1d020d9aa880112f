"""The workspace page's listings: a folder's notebooks with owner and the caller's role, the
notebooks others shared with the caller, and for admins their own notebooks apart from everyone's.

GET /api/workspace?folder=/x&scope=mine|all: `mine` (the default) lists what the caller owns or
was given through a share, which for an admin is their own work; `all` is everything the caller
may see (for an admin: everyone's notebooks). Each notebook carries `owner` (a user name), `role`
(the caller's, so the page shows Rename/Move/Delete/Share only where they work) and `mine`.
GET /api/workspace/shared: notebooks of other people shared with the caller, by a share on the
notebook or on a folder above it, wherever they are.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from console.store import NotebookInfo, NotFound, Store, normalize_folder
from console.store.paths import is_under

from console.server import access, serialize
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.errors import ApiError

SCOPES = ("mine", "all")


class _Names:
    """User names by id, each looked up once per request."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.names: dict[int, str | None] = {}

    def __call__(self, user_id: int | None) -> str | None:
        if user_id is None:
            return None
        if user_id not in self.names:
            try:
                self.names[user_id] = self.store.get_user(user_id).username
            except NotFound:
                self.names[user_id] = None
        return self.names[user_id]


def _shown(store: Store, user: Any, names: _Names, nb: NotebookInfo) -> dict[str, Any]:
    return {**serialize.notebook_info(nb), "owner": names(nb.owner_id), "mine": nb.owner_id == user.id,
            "role": access.role_of(store, user, nb)}


def _personal_role(store: Store, user: Any, nb: NotebookInfo) -> bool:
    """Whether the admin holds the notebook as anyone would: owning it, or through a share or a
    folder they made; their power over everything else does not count here. A notebook without an
    owner (made outside the API, or whose owner was deleted) is nobody else's work: it is theirs."""
    if nb.owner_id == user.id or nb.owner_id is None:
        return True
    grants = access.grants_of(store, user)
    return nb.id in grants.notebook_roles or any(is_under(nb.folder, f) for f, _ in grants.folder_roles)


def _personal_listing(store: Store, user: Any, folder: str) -> tuple[list[str], list[NotebookInfo]]:
    return access.listing_of(store, user, folder, lambda nb: _personal_role(store, user, nb))


def listing() -> ResponseReturnValue:
    store, user = get_store(), signed_in()
    scope = request.args.get("scope", "mine")
    if scope not in SCOPES:
        raise ApiError(400, f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    admin = access.grants_of(store, user).admin
    if admin and scope == "mine":
        folder = normalize_folder(request.args.get("folder", "/"))
        folders, notebooks = _personal_listing(store, user, folder)
    else:
        folder, folders, notebooks = access.visible_listing(request.args.get("folder", "/"))
    names = _Names(store)
    return jsonify({
        "folder": folder, "scope": scope, "admin": admin,
        "folders": [{"path": p, "name": p.rsplit("/", 1)[-1]} for p in folders],
        "notebooks": [_shown(store, user, names, nb) for nb in notebooks],
    })


def shared_with_me() -> ResponseReturnValue:
    store, user = get_store(), signed_in()
    grants = access.grants_of(store, user)
    shared_folders = [f for f, _ in grants.folder_roles if f not in set(store.owned_folders(user.id))]
    names = _Names(store)
    out = []
    for nb in store.notebooks_under("/"):
        if nb.owner_id == user.id:
            continue
        if nb.id in grants.notebook_roles or any(is_under(nb.folder, f) for f in shared_folders):
            out.append(_shown(store, user, names, nb))
    out.sort(key=lambda d: (str(d["name"]).lower(), d["id"]))
    return jsonify({"notebooks": out})


def create_blueprint() -> Blueprint:
    bp = Blueprint("workspace", __name__, url_prefix="/workspace")
    bp.add_url_rule("", "listing", listing, methods=["GET"])
    bp.add_url_rule("/shared", "shared", shared_with_me, methods=["GET"])
    return bp
