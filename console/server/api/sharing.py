"""Sharing endpoints: roles for users on a notebook or a folder, read-only links, the user list.

    GET    /api/users                                   -> {users: [{username, display_name, site_role}]}
    GET    /api/notebooks/<id>/shares                   -> {shares: [{id, username, role, ...}]}  owner
    POST   /api/notebooks/<id>/shares   {user, role}    -> the share (replaces the user's role)  owner
                                                       (400 for a role above the user's site cap: readers get viewer)
    DELETE /api/notebooks/<id>/shares/<share_id>        -> 204                                   owner
    GET    /api/folders/shares?path=/team               -> {shares}                  owner of the folder
    POST   /api/folders/shares          {path, user, role}                           owner of the folder
    DELETE /api/folders/shares/<share_id>                                            owner of the folder
    GET    /api/notebooks/<id>/links                    -> {links: [{token, url, active, ...}]}   owner
    POST   /api/notebooks/<id>/links                    -> 201 the link                           owner
    DELETE /api/notebooks/<id>/links/<token>            -> the link, revoked                      owner
"""
from __future__ import annotations

from dataclasses import dataclass

from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue

from console.roles import ROLES, SITE_CAP, at_least, capped
from console.store import NotFound, normalize_folder

from console.server import serialize
from console.server.access import require_folder
from console.server.auth import current_user
from console.server.deps import get_store
from console.server.errors import ApiError
from console.server.live.membership import revoke as revoke_sockets
from console.server.validate import typed_body, body_as


def _share_json(share: Any) -> dict[str, Any]:
    d: dict[str, Any] = serialize.plain(share)
    try:
        user = get_store().get_user(share.user_id)
    except NotFound:
        d["username"] = d["site_role"] = None
        d["effective_role"] = share.role
        return d
    # A share above what the account's site role may hold (a member made a reader since) counts as
    # the cap: the dialog shows both.
    d["username"], d["site_role"] = user.username, user.site_role
    d["effective_role"] = capped(user.site_role, share.role)
    return d


def _link_json(link: Any) -> dict[str, Any]:
    d: dict[str, Any] = serialize.plain(link)
    d["active"] = link.active
    d["url"] = f"/p/{link.token}"
    return d


@typed_body("POST /api/notebooks/<id>/shares")
@dataclass
class NotebookShare:
    user: str  # a username
    role: str


@typed_body("POST /api/folders/shares")
@dataclass
class FolderShare:
    path: str
    user: str
    role: str


def _target_user(name: str) -> Any:
    try:
        return get_store().get_user_by_name(name)
    except NotFound as exc:
        raise ApiError(400, f"no user named {name!r}") from exc


def _role(role: str, user: Any) -> str:
    if role not in ROLES:
        raise ApiError(400, f"'role' must be one of {', '.join(ROLES)}")
    cap = SITE_CAP.get(user.site_role, "viewer")
    if not at_least(cap, role):
        # Refused rather than quietly stored as viewer: the sharer should know what the share gives.
        raise ApiError(400, f"{user.username} is a {user.site_role}: a {user.site_role} can be given "
                            f"at most the {cap} role")
    return role


def users() -> ResponseReturnValue:
    # site_role: the share dialog offers a reader only the roles it can hold.
    return jsonify({"users": [{"username": u.username, "display_name": u.display_name, "site_role": u.site_role}
                              for u in get_store().list_users()]})


def shares(notebook_id: str) -> ResponseReturnValue:
    return jsonify({"shares": [_share_json(s) for s in get_store().list_shares(notebook_id=notebook_id)]})


def share_set(notebook_id: str) -> ResponseReturnValue:
    spec = body_as(NotebookShare)
    user = _target_user(spec.user)
    role = _role(spec.role, user)
    return jsonify(_share_json(get_store().set_share(user.id, role, notebook_id=notebook_id))), 201


def share_delete(notebook_id: str, share_id: int) -> ResponseReturnValue:
    store = get_store()
    share = store.get_share(share_id)
    if share.notebook_id != notebook_id:
        raise NotFound(f"no share {share_id!r} on this notebook")
    store.delete_share(share_id)
    revoke_sockets(user_id=share.user_id, notebook_id=notebook_id)  # its sockets leave the room unless still allowed
    return Response(status=204)


def folder_shares() -> ResponseReturnValue:
    path = normalize_folder(request.args.get("path") or "/")
    require_folder(path, "owner")
    return jsonify({"path": path, "shares": [_share_json(s) for s in get_store().list_shares(folder_path=path)]})


def folder_share_set() -> ResponseReturnValue:
    spec = body_as(FolderShare)
    path = normalize_folder(spec.path)
    if path == "/":
        raise ApiError(400, "share a notebook or a folder below the root")
    require_folder(path, "owner")
    user = _target_user(spec.user)
    role = _role(spec.role, user)
    return jsonify(_share_json(get_store().set_share(user.id, role, folder_path=path))), 201


def folder_share_delete(share_id: int) -> ResponseReturnValue:
    store = get_store()
    share = store.get_share(share_id)
    if share.folder_path is None:
        raise NotFound(f"no folder share {share_id!r}")
    require_folder(share.folder_path, "owner")
    store.delete_share(share_id)
    revoke_sockets(user_id=share.user_id)  # the folder's notebooks: re-checked for that user's sockets
    return Response(status=204)


def links(notebook_id: str) -> ResponseReturnValue:
    return jsonify({"links": [_link_json(ln) for ln in get_store().list_links(notebook_id)]})


def link_create(notebook_id: str) -> ResponseReturnValue:
    user = current_user()
    return jsonify(_link_json(get_store().create_link(notebook_id, created_by=user.id if user else None))), 201


def link_revoke(notebook_id: str, token: str) -> ResponseReturnValue:
    store = get_store()
    if store.get_link(token).notebook_id != notebook_id:
        raise NotFound("no such link")
    return jsonify(_link_json(store.revoke_link(token)))


def create_blueprint() -> Blueprint:
    bp = Blueprint("sharing", __name__, url_prefix="/api")
    bp.add_url_rule("/users", "users", users, methods=["GET"])
    nb = "/notebooks/<notebook_id>"
    bp.add_url_rule(f"{nb}/shares", "shares", shares, methods=["GET"])
    bp.add_url_rule(f"{nb}/shares", "share_set", share_set, methods=["POST"])
    bp.add_url_rule(f"{nb}/shares/<int:share_id>", "share_delete", share_delete, methods=["DELETE"])
    bp.add_url_rule("/folders/shares", "folder_shares", folder_shares, methods=["GET"])
    bp.add_url_rule("/folders/shares", "folder_share_set", folder_share_set, methods=["POST"])
    bp.add_url_rule("/folders/shares/<int:share_id>", "folder_share_delete", folder_share_delete, methods=["DELETE"])
    bp.add_url_rule(f"{nb}/links", "links", links, methods=["GET"])
    bp.add_url_rule(f"{nb}/links", "link_create", link_create, methods=["POST"])
    bp.add_url_rule(f"{nb}/links/<token>", "link_revoke", link_revoke, methods=["DELETE"])
    return bp
