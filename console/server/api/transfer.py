"""Export and import: the product's notebook file format (docs/notebook-format.md), Jupyter .ipynb
both ways, and Byzer Notebook .bznb/.mlnb in (console/interchange.py). A malformed file is a 400
and creates nothing."""
from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from console.interchange import read_any, to_ipynb
from console.wire import environment as envspec
from console.notebook_file import NotebookFileError, dump_notebook
from console.store import StoreError, valid_cell_id
from console.store.paths import check_name

from console.server import access, serialize
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.errors import ApiError
from console.server.validate import json_body, query_bool


def _outputs(run: dict) -> dict:
    keep = ("status", "error", "result", "outputs", "started_at", "finished_at")
    return {k: run[k] for k in keep if k in run}


def export_notebook(notebook_id: str) -> ResponseReturnValue:
    store = get_store()
    nb = store.get_notebook(notebook_id)
    fmt = request.args.get("format", "json")
    if fmt not in ("json", "ipynb"):
        raise ApiError(400, "'format' must be json or ipynb")
    # Jupyter users expect outputs in an .ipynb; our own format keeps them opt-in.
    with_outputs = query_bool("outputs") or (fmt == "ipynb" and request.args.get("outputs") is None)
    runs = store.latest_runs(notebook_id) if with_outputs else {}
    cells = []
    for c in nb.cells:
        cell: dict[str, Any] = {"id": c.id, "kind": c.kind, "source": c.source}
        if c.view is not None:  # the cell's chart (console/store/views.py)
            cell["view"] = c.view
        if c.id in runs:
            cell["outputs"] = _outputs(serialize.run(runs[c.id]))
        cells.append(cell)
    meta: dict[str, Any] = {"folder": nb.folder, "revision": nb.revision}
    env = store.get_environment(notebook_id)
    if env["requirements"]:  # the notebook's packages travel with it (a headless run builds them)
        meta["environment"] = env
    data = to_ipynb(nb.name, cells, meta) if fmt == "ipynb" else dump_notebook(nb.name, cells, meta)
    resp = jsonify(data)
    filename = re.sub(r"[^\w.-]+", "_", nb.name, flags=re.ASCII).strip("_") or "notebook"
    resp.headers["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return resp


def import_notebook() -> ResponseReturnValue:
    """Body: a notebook file. Query: format=json|ipynb|bznb|mlnb (default: from the content),
    folder=/x (default: the file's metadata.folder or /), name=..."""
    try:
        parsed = read_any(json_body(), request.args.get("format"))
    except NotebookFileError as exc:
        raise ApiError(400, f"not a notebook file: {exc}") from exc
    name = check_name(request.args.get("name") or parsed["name"])
    if request.args.get("folder"):
        folder = access.place(request.args["folder"])
    else:
        # The file's own folder is a suggestion: where the importer may not write, the root.
        folder = parsed["metadata"].get("folder")
        try:
            folder = access.place(folder if isinstance(folder, str) else "/")
        except (ApiError, StoreError):
            folder = "/"
    # Ids from other tools (or repeated ones) are replaced rather than refused.
    seen: set[str] = set()
    cells = []
    for c in parsed["cells"]:
        cid = c.pop("id", None)
        if cid is not None and valid_cell_id(cid) and cid not in seen:
            c["id"] = cid
            seen.add(cid)
        cells.append(c)
    store = get_store()
    try:  # checked before the notebook is made, so a bad list refuses the import as a whole
        env = envspec.clean(parsed["metadata"]["environment"]) if "environment" in parsed["metadata"] else None
    except envspec.BadEnvironment as exc:
        raise ApiError(400, f"not a notebook file: metadata.environment: {exc}") from exc
    nb = store.create_notebook(
        name, folder, owner_id=signed_in().id, cells=cells, environment=env,
    )
    return jsonify(serialize.notebook(nb)), 201


def create_blueprint() -> Blueprint:
    bp = Blueprint("transfer", __name__, url_prefix="/notebooks")
    bp.add_url_rule("/import", "import", import_notebook, methods=["POST"])
    bp.add_url_rule("/<notebook_id>/export", "export", export_notebook, methods=["GET"])
    return bp
