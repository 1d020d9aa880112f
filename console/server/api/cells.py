"""Cell endpoints: add, edit source/kind, move, delete; each takes base_revision."""
from __future__ import annotations

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from console.server import serialize
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.errors import ApiError
from console.server.validate import base_revision, field, json_body


def add_cell(notebook_id: str) -> ResponseReturnValue:
    body = json_body()
    nb, cell = get_store().add_cell(
        notebook_id, base_revision(body),
        kind=field(body, "kind", str, "mlsql"), source=field(body, "source", str, ""),
        position=field(body, "position", int, None), author_id=signed_in().id,
    )
    return jsonify({**serialize.notebook(nb), "cell": serialize.plain(cell)}), 201


def edit_cell(notebook_id: str, cell_id: str) -> ResponseReturnValue:
    body = json_body()
    source, kind = field(body, "source", str, None), field(body, "kind", str, None)
    if source is None and kind is None:
        raise ApiError(400, "give 'source' and/or 'kind'")
    nb = get_store().edit_cell(notebook_id, cell_id, base_revision(body), source=source, kind=kind,
                               author_id=signed_in().id)
    return jsonify(serialize.notebook(nb))


def move_cell(notebook_id: str, cell_id: str) -> ResponseReturnValue:
    body = json_body()
    nb = get_store().move_cell(notebook_id, cell_id, field(body, "position", int), base_revision(body),
                               author_id=signed_in().id)
    return jsonify(serialize.notebook(nb))


def delete_cell(notebook_id: str, cell_id: str) -> ResponseReturnValue:
    body = json_body(required=False)
    nb = get_store().delete_cell(notebook_id, cell_id, base_revision(body), author_id=signed_in().id)
    return jsonify(serialize.notebook(nb))


def create_blueprint() -> Blueprint:
    bp = Blueprint("cells", __name__, url_prefix="/notebooks/<notebook_id>/cells")
    bp.add_url_rule("", "add", add_cell, methods=["POST"])
    bp.add_url_rule("/<cell_id>", "edit", edit_cell, methods=["PATCH"])
    bp.add_url_rule("/<cell_id>", "delete", delete_cell, methods=["DELETE"])
    bp.add_url_rule("/<cell_id>/move", "move", move_cell, methods=["POST"])
    return bp
