"""Folder endpoints: list subfolders, create, rename (or move), delete.

Creating needs the editor role where the folder goes (access.place); renaming and deleting need
the owner role on the folder.
"""
from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from console.store import Exists, normalize_folder
from console.store.paths import parent_of

from console.server import access
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.errors import ApiError
from console.server.validate import typed_body, body_as, query_bool


def list_folders() -> ResponseReturnValue:
    path, folders, _ = access.visible_listing(request.args.get("path", "/"))
    return jsonify({"path": path, "folders": [{"path": p, "name": p.rsplit("/", 1)[-1]} for p in folders]})


def _new_path(path: str) -> str:
    """A folder path that does not exist yet, in a place the caller may write to."""
    store = get_store()
    path = normalize_folder(path)
    if path != "/" and store.folder_exists(path):
        raise Exists(f"folder {path} exists already")
    access.place(parent_of(path))
    return path


@typed_body("POST /api/folders")
@dataclass
class NewFolder:
    path: str


@typed_body("POST /api/folders/rename")
@dataclass
class FolderRename:
    path: str
    new_path: str


def create_folder() -> ResponseReturnValue:
    spec = body_as(NewFolder)
    path = get_store().create_folder(_new_path(spec.path), owner_id=signed_in().id)
    return jsonify({"path": path}), 201


def rename_folder() -> ResponseReturnValue:
    spec = body_as(FolderRename)
    old = spec.path
    access.require_folder(old, "owner")
    path = get_store().rename_folder(old, _new_path(spec.new_path))
    return jsonify({"path": path})


def delete_folder() -> ResponseReturnValue:
    path = request.args.get("path")
    if not path:
        raise ApiError(400, "'path' is required (DELETE /api/folders?path=/a/b)")
    access.require_folder(path, "owner")
    deleted = get_store().delete_folder(path, recursive=query_bool("recursive"))
    return jsonify({"path": path, "deleted_notebooks": deleted})


def create_blueprint() -> Blueprint:
    bp = Blueprint("folders", __name__, url_prefix="/folders")
    bp.add_url_rule("", "list", list_folders, methods=["GET"])
    bp.add_url_rule("", "create", create_folder, methods=["POST"])
    bp.add_url_rule("", "delete", delete_folder, methods=["DELETE"])
    bp.add_url_rule("/rename", "rename", rename_folder, methods=["POST"])
    return bp
