"""Export and import in the product's notebook file format (docs/notebook-format.md)."""
from __future__ import annotations

import re

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from console.notebook_file import NotebookFileError, dump_notebook, parse_notebook
from console.store import valid_cell_id

from .. import serialize
from ..auth import current_user
from ..deps import get_store
from ..errors import ApiError
from ..validate import json_body, query_bool


def _outputs(run: dict) -> dict:
    keep = ("status", "error", "result", "outputs", "started_at", "finished_at")
    return {k: run[k] for k in keep if k in run}


def export_notebook(notebook_id: str) -> ResponseReturnValue:
    store = get_store()
    nb = store.get_notebook(notebook_id)
    runs = store.latest_runs(notebook_id) if query_bool("outputs") else {}
    cells = []
    for c in nb.cells:
        cell = {"id": c.id, "kind": c.kind, "source": c.source}
        if c.id in runs:
            cell["outputs"] = _outputs(serialize.run(runs[c.id]))
        cells.append(cell)
    data = dump_notebook(nb.name, cells, {"folder": nb.folder, "revision": nb.revision})
    resp = jsonify(data)
    filename = re.sub(r"[^\w.-]+", "_", nb.name, flags=re.ASCII).strip("_") or "notebook"
    resp.headers["Content-Disposition"] = f'attachment; filename="{filename}.json"'
    return resp


def import_notebook() -> ResponseReturnValue:
    """Body: a notebook file. Query: folder=/x (default: the file's metadata.folder or /), name=..."""
    try:
        parsed = parse_notebook(json_body())
    except NotebookFileError as exc:
        raise ApiError(400, f"not a notebook file: {exc}") from exc
    folder = request.args.get("folder") or parsed["metadata"].get("folder") or "/"
    if not isinstance(folder, str):
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
    nb = get_store().create_notebook(
        request.args.get("name") or parsed["name"], folder, owner_id=current_user().id, cells=cells,
    )
    return jsonify(serialize.notebook(nb, {})), 201


def create_blueprint() -> Blueprint:
    bp = Blueprint("transfer", __name__, url_prefix="/notebooks")
    bp.add_url_rule("/import", "import", import_notebook, methods=["POST"])
    bp.add_url_rule("/<notebook_id>/export", "export", export_notebook, methods=["GET"])
    return bp
