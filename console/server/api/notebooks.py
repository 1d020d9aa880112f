"""Notebook endpoints: list by folder, create, get, replace, rename, move,
duplicate/fork, delete. Roles are checked before a handler runs (console/server/access.py POLICIES);
handlers that place a notebook in a folder also check that folder (access.place)."""
from __future__ import annotations

from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue

from console.server import access, serialize
from console.server.auth import current_user, signed_in
from console.server.deps import get_config, get_store
from console.server.validate import base_revision, field, json_body


def list_notebooks() -> ResponseReturnValue:
    folder, folders, notebooks = access.visible_listing(request.args.get("folder", "/"))
    return jsonify({
        "folder": folder,
        "folders": [{"path": p, "name": p.rsplit("/", 1)[-1]} for p in folders],
        "notebooks": [serialize.notebook_info(nb) for nb in notebooks],
    })


def create_notebook() -> ResponseReturnValue:
    body = json_body()
    nb = get_store().create_notebook(
        field(body, "name", str),
        access.place(field(body, "folder", str, "/")),
        owner_id=signed_in().id,
        cells=field(body, "cells", list, []),
    )
    return jsonify(serialize.notebook(nb)), 201


def get_notebook(notebook_id: str) -> ResponseReturnValue:
    """The notebook and the caller's role; the page loads stored output apart (GET .../runs)."""
    store = get_store()
    nb = store.get_notebook(notebook_id)
    # The caller's role, so the page can leave out what it may not do (Share, Run, editing).
    return jsonify({**serialize.notebook(nb), "role": access.role_of(store, current_user(), nb)})


def replace_notebook(notebook_id: str) -> ResponseReturnValue:
    body = json_body()
    nb = get_store().update_notebook(
        notebook_id,
        base_revision(body),
        name=field(body, "name", str, None),
        cells=field(body, "cells", list),
        author_id=signed_in().id,
    )
    return jsonify(serialize.notebook(nb))


def rename_notebook(notebook_id: str) -> ResponseReturnValue:
    body = json_body()
    nb = get_store().rename_notebook(
        notebook_id, field(body, "name", str), base_revision(body, required=False), signed_in().id
    )
    return jsonify(serialize.notebook(nb))


def move_notebook(notebook_id: str) -> ResponseReturnValue:
    body = json_body()
    folder = access.place(field(body, "folder", str))
    return jsonify(serialize.notebook_info(get_store().move_notebook(notebook_id, folder)))


def duplicate_notebook(notebook_id: str) -> ResponseReturnValue:
    """A copy owned by the caller (anyone who can view may fork): in the source's folder when they
    may write there, else at the root of their own workspace, unless `folder` says where."""
    body = json_body(required=False)
    store = get_store()
    folder = field(body, "folder", str, None)
    if folder is None:
        src = store.get_notebook_info(notebook_id)
        user = current_user()
        folder = src.folder if access.at_least(access.folder_role(store, user, src.folder), "editor") else "/"
    nb = store.duplicate_notebook(
        notebook_id, owner_id=signed_in().id,
        name=field(body, "name", str, None), folder=access.place(folder),
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
