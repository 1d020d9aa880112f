"""Notebook endpoints: list by folder, create, get, replace, rename, move,
duplicate/fork, delete. Roles are checked before a handler runs (console/server/access.py POLICIES);
handlers that place a notebook in a folder also check that folder (access.place)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue

from console.server import access, serialize
from console.server.auth import current_user, signed_in
from console.server.deps import get_config, get_store
from console.server.validate import BASE_REVISION, typed_body, body_as, revision_given


def list_notebooks() -> ResponseReturnValue:
    folder, folders, notebooks = access.visible_listing(request.args.get("folder", "/"))
    return jsonify({
        "folder": folder,
        "folders": [{"path": p, "name": p.rsplit("/", 1)[-1]} for p in folders],
        "notebooks": [serialize.notebook_info(nb) for nb in notebooks],
    })


@typed_body("POST /api/notebooks")
@dataclass
class NewNotebook:
    name: str
    folder: str = "/"
    cells: list[Any] | None = None  # [{kind, source}]; the store checks each


@typed_body("PUT /api/notebooks/<id>")
@dataclass
class NotebookReplace:
    cells: list[Any]
    base_revision: int | None = BASE_REVISION
    name: str | None = None


@typed_body("POST /api/notebooks/<id>/rename")
@dataclass
class NotebookRename:
    name: str
    base_revision: int | None = None  # a rename needs none: it changes no cell


@typed_body("POST /api/notebooks/<id>/move")
@dataclass
class NotebookMove:
    folder: str


@typed_body("POST /api/notebooks/<id>/duplicate")
@dataclass
class NotebookCopy:
    name: str | None = None
    folder: str | None = None  # the source's folder when the caller may write there, else the root


def create_notebook() -> ResponseReturnValue:
    spec = body_as(NewNotebook)
    nb = get_store().create_notebook(spec.name, access.place(spec.folder), owner_id=signed_in().id,
                                     cells=spec.cells or [])
    return jsonify(serialize.notebook(nb)), 201


def get_notebook(notebook_id: str) -> ResponseReturnValue:
    """The notebook and the caller's role; the page loads stored output apart (GET .../runs)."""
    store = get_store()
    nb = store.get_notebook(notebook_id)
    # The caller's role, so the page can leave out what it may not do (Share, Run, editing).
    return jsonify({**serialize.notebook(nb), "role": access.role_of(store, current_user(), nb)})


def replace_notebook(notebook_id: str) -> ResponseReturnValue:
    spec = body_as(NotebookReplace)
    nb = get_store().update_notebook(notebook_id, revision_given(spec.base_revision), name=spec.name,
                                     cells=spec.cells, author_id=signed_in().id)
    return jsonify(serialize.notebook(nb))


def rename_notebook(notebook_id: str) -> ResponseReturnValue:
    spec = body_as(NotebookRename)
    nb = get_store().rename_notebook(notebook_id, spec.name, revision_given(spec.base_revision, required=False),
                                     signed_in().id)
    return jsonify(serialize.notebook(nb))


def move_notebook(notebook_id: str) -> ResponseReturnValue:
    folder = access.place(body_as(NotebookMove).folder)
    return jsonify(serialize.notebook_info(get_store().move_notebook(notebook_id, folder)))


def duplicate_notebook(notebook_id: str) -> ResponseReturnValue:
    """A copy owned by the caller (anyone who can view may fork): in the source's folder when they
    may write there, else at the root of their own workspace, unless `folder` says where."""
    spec = body_as(NotebookCopy, required=False)
    store = get_store()
    folder = spec.folder
    if folder is None:
        src = store.get_notebook_info(notebook_id)
        user = current_user()
        folder = src.folder if access.at_least(access.folder_role(store, user, src.folder), "editor") else "/"
    nb = store.duplicate_notebook(
        notebook_id, owner_id=signed_in().id,
        name=spec.name, folder=access.place(folder),
    )
    return jsonify(serialize.notebook(nb)), 201


def delete_notebook(notebook_id: str) -> ResponseReturnValue:
    from console.outputs.logfile import remove_notebook_logs

    get_store().delete_notebook(notebook_id)
    remove_notebook_logs(get_config().data_dir, notebook_id)
    return Response(status=204)


def create_blueprint() -> Blueprint:
    bp = Blueprint("notebooks", __name__, url_prefix="/notebooks")
    bp.add_url_rule("", "list", list_notebooks, methods=["GET"])
    bp.add_url_rule("", "create", create_notebook, methods=["POST"])
    bp.add_url_rule("/<notebook_id>", "get", get_notebook, methods=["GET"])
    bp.add_url_rule("/<notebook_id>", "replace", replace_notebook, methods=["PUT"])
    bp.add_url_rule("/<notebook_id>", "delete", delete_notebook, methods=["DELETE"])
    bp.add_url_rule("/<notebook_id>/rename", "rename", rename_notebook, methods=["POST"])
    bp.add_url_rule("/<notebook_id>/move", "move", move_notebook, methods=["POST"])
    bp.add_url_rule("/<notebook_id>/duplicate", "duplicate", duplicate_notebook, methods=["POST"])
    bp.add_url_rule("/<notebook_id>/fork", "fork", duplicate_notebook, methods=["POST"])
    return bp
