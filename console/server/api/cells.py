"""Cell endpoints: add, edit source/kind, move, delete; each takes base_revision."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from console.server import serialize
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.errors import ApiError
from console.server.validate import (BASE_REVISION, NULLABLE, Absent, body_as, cell_view, revision_given,
                                     typed_body)


@typed_body("POST /api/notebooks/<id>/cells")
@dataclass
class NewCell:
    base_revision: int | None = BASE_REVISION
    kind: str = "mlsql"
    source: str = ""
    position: int | None = None  # at the end when left out


@typed_body("POST /api/notebooks/<id>/cells/<cell_id>/move")
@dataclass
class CellMove:
    position: int
    base_revision: int | None = BASE_REVISION


@typed_body("DELETE /api/notebooks/<id>/cells/<cell_id>")
@dataclass
class CellDelete:
    base_revision: int | None = BASE_REVISION


def add_cell(notebook_id: str) -> ResponseReturnValue:
    spec = body_as(NewCell)
    nb, cell = get_store().add_cell(notebook_id, revision_given(spec.base_revision), kind=spec.kind,
                                    source=spec.source, position=spec.position, author_id=signed_in().id)
    return jsonify({**serialize.notebook(nb), "cell": serialize.plain(cell)}), 201


@typed_body("PATCH /api/notebooks/<id>/cells/<cell_id>")
@dataclass
class CellEdit:
    base_revision: int | None = BASE_REVISION
    source: str | None = None
    kind: str | None = None
    view: Any = NULLABLE  # how the result is shown (checked by cell_view); null: the table again


def edit_cell(notebook_id: str, cell_id: str) -> ResponseReturnValue:
    """source and/or kind, and/or view (how the result is shown: a chart, or null for the table)."""
    spec = body_as(CellEdit)
    source, kind = spec.source, spec.kind
    has_view = not isinstance(spec.view, Absent)
    if source is None and kind is None and not has_view:
        raise ApiError(400, "give 'source', 'kind' and/or 'view'")
    view = cell_view({"view": spec.view}) if has_view else None  # checked before anything is written
    store, author, base = get_store(), signed_in().id, revision_given(spec.base_revision)
    if source is not None or kind is not None:
        nb = store.edit_cell(notebook_id, cell_id, base, source=source, kind=kind, author_id=author)
        base = nb.revision
    if has_view:
        nb = store.set_cell_view(notebook_id, cell_id, view, base, author_id=author)
    return jsonify(serialize.notebook(nb))


def move_cell(notebook_id: str, cell_id: str) -> ResponseReturnValue:
    spec = body_as(CellMove)
    nb = get_store().move_cell(notebook_id, cell_id, spec.position, revision_given(spec.base_revision),
                               author_id=signed_in().id)
    return jsonify(serialize.notebook(nb))


def delete_cell(notebook_id: str, cell_id: str) -> ResponseReturnValue:
    spec = body_as(CellDelete, required=False)
    nb = get_store().delete_cell(notebook_id, cell_id, revision_given(spec.base_revision), author_id=signed_in().id)
    return jsonify(serialize.notebook(nb))


def create_blueprint() -> Blueprint:
    bp = Blueprint("cells", __name__, url_prefix="/notebooks/<notebook_id>/cells")
    bp.add_url_rule("", "add", add_cell, methods=["POST"])
    bp.add_url_rule("/<cell_id>", "edit", edit_cell, methods=["PATCH"])
    bp.add_url_rule("/<cell_id>", "delete", delete_cell, methods=["DELETE"])
    bp.add_url_rule("/<cell_id>/move", "move", move_cell, methods=["POST"])
    return bp
