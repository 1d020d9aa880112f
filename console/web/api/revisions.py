"""Revision endpoints: list a notebook's history, read one snapshot, restore it as a new revision."""
from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from .. import serialize
from ..auth import current_user
from ..deps import get_store
from ..validate import base_revision, json_body


def list_revisions(notebook_id: str) -> ResponseReturnValue:
    return jsonify({"revisions": serialize.plain(get_store().list_revisions(notebook_id))})


def get_revision(notebook_id: str, number: int) -> ResponseReturnValue:
    return jsonify(serialize.plain(get_store().get_revision(notebook_id, number)))


def restore_revision(notebook_id: str, number: int) -> ResponseReturnValue:
    body = json_body(required=False)
    nb = get_store().restore_revision(notebook_id, number, base_revision(body, required=False),
                                      author_id=current_user().id)
    return jsonify(serialize.notebook(nb))


def create_blueprint() -> Blueprint:
    bp = Blueprint("revisions", __name__, url_prefix="/notebooks/<notebook_id>/revisions")
    bp.add_url_rule("", "list", list_revisions, methods=["GET"])
    bp.add_url_rule("/<int:number>", "get", get_revision, methods=["GET"])
    bp.add_url_rule("/<int:number>/restore", "restore", restore_revision, methods=["POST"])
    return bp
