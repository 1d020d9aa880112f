"""Folder endpoints: list subfolders, create, rename (or move), delete."""
from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from ..auth import current_user
from ..deps import get_store
from ..errors import ApiError
from ..validate import field, json_body, query_bool


def list_folders() -> ResponseReturnValue:
    listing = get_store().list_folder(request.args.get("path", "/"))
    return jsonify({"path": listing.path, "folders": [{"path": p, "name": p.rsplit("/", 1)[-1]}
                                                      for p in listing.folders]})


def create_folder() -> ResponseReturnValue:
    body = json_body()
    path = get_store().create_folder(field(body, "path", str), owner_id=current_user().id)
    return jsonify({"path": path}), 201


def rename_folder() -> ResponseReturnValue:
    body = json_body()
    path = get_store().rename_folder(field(body, "path", str), field(body, "new_path", str))
    return jsonify({"path": path})


def delete_folder() -> ResponseReturnValue:
    path = request.args.get("path")
    if not path:
        raise ApiError(400, "'path' is required (DELETE /api/folders?path=/a/b)")
    deleted = get_store().delete_folder(path, recursive=query_bool("recursive"))
    return jsonify({"path": path, "deleted_notebooks": deleted})


def create_blueprint() -> Blueprint:
    bp = Blueprint("folders", __name__, url_prefix="/folders")
    bp.add_url_rule("", "list", list_folders, methods=["GET"])
    bp.add_url_rule("", "create", create_folder, methods=["POST"])
    bp.add_url_rule("", "delete", delete_folder, methods=["DELETE"])
    bp.add_url_rule("/rename", "rename", rename_folder, methods=["POST"])
    return bp
