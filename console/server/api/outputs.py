"""Clear outputs: forget a cell's stored runs (or every cell's), so a reload shows the cell empty.

    POST /api/notebooks/<id>/outputs/clear  {"cell_id": id} | {"all": true}
         -> {"cleared": [cell ids], "runs": n, "running": [cell ids whose run is still going]}

The page clears what it shows at once; this makes it stick: the stored runs of the cells go,
with their output chunks, metrics and log files, so the notebook page, the socket replay, the
run API, the export and the published page no longer show them. A run still queued or running
is kept (its output is still arriving) and named in "running". Editing a notebook needs an editor,
and so does this (console/server/access.py), since it changes what every viewer sees.
"""
from __future__ import annotations

from dataclasses import dataclass

import logging
from pathlib import Path

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from console.outputs.logfile import LogFolder
from console.server.deps import get_config, get_store
from console.server.errors import ApiError
from console.server.validate import typed_body, body_as


def _remove_log(data_dir: Path, rel: str | None) -> None:
    if not rel:
        return
    try:  # only a log's own place, through its folders' descriptors, never through a link
        LogFolder(data_dir).remove(rel)
    except (OSError, ValueError):
        logging.getLogger(__name__).warning("the log file %s was not removed", rel, exc_info=True)


@typed_body("POST /api/notebooks/<id>/outputs/clear")
@dataclass
class ClearOutputs:
    cell_id: str | None = None
    all: bool = False  # every cell's


def clear_outputs(notebook_id: str) -> ResponseReturnValue:
    spec = body_as(ClearOutputs)
    store = get_store()
    if spec.all:
        cell_ids = None
    elif spec.cell_id is not None:
        cell_id = spec.cell_id
        known = [c.id for c in store.get_notebook(notebook_id).cells]
        if cell_id not in known:
            raise ApiError(404, f"no cell {cell_id!r} in notebook {notebook_id!r}; "
                                f"it has {len(known)} cell{'s' if len(known) != 1 else ''}")
        cell_ids = [cell_id]
    else:
        raise ApiError(400, "give 'cell_id' (a cell id) or 'all': true")
    gone = store.delete_finished_runs(notebook_id, cell_ids)
    data_dir = get_config().data_dir
    for _run_id, _cell, log in gone:
        _remove_log(data_dir, log)
    left = store.latest_runs(notebook_id, with_outputs=False)
    running = sorted(c for c, r in left.items() if cell_ids is None or c in cell_ids)
    cleared = sorted({c for _r, c, _log in gone} - set(running))
    return jsonify({"cleared": cleared, "runs": len(gone), "running": running})


def create_blueprint() -> Blueprint:
    bp = Blueprint("outputs", __name__, url_prefix="/notebooks")
    bp.add_url_rule("/<notebook_id>/outputs/clear", "clear", clear_outputs, methods=["POST"])
    return bp
