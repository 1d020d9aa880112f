"""Run endpoints for scripts: run/interrupt/restart return 202 at once; runs, outputs and logs to read.

    POST /api/notebooks/<id>/run        {"cell_id": id} | {"all": true} | {"from": id} -> 202 {run_ids}
    POST /api/notebooks/<id>/interrupt  -> 202 {interrupted, cancelled}
    POST /api/notebooks/<id>/restart    -> 202 {}
    GET  /api/notebooks/<id>/kernel     -> {kernels: [{user_id, status, reason}]}
    GET  /api/notebooks/<id>/runs       -> {runs: {cell_id: run}} (last run per cell, output head+tail)
    GET  /api/runs/<run_id>             -> the run with its events
    GET  /api/runs/<run_id>/outputs?since=N&metrics_since=M -> {events}
    GET  /api/runs/<run_id>/log         -> the full output as text/plain (a download)
    GET  /api/runs/<run_id>/manifest    -> what the run read and wrote, its revision and parameters
                                           (console/server/sessions/manifests.py)
    GET  /api/lineage?table=db.table    -> which runs wrote and read each version of a lake table
    GET  /api/runs/<id>/diff/<other>    -> what changed between two runs (run_diff.py)
    POST /api/runs/<id>/replay          -> the run again as recorded (rerun.py)
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, stream_with_context
from flask.typing import ResponseReturnValue

from console.ids import CellId, NotebookId, RunId, UserId
from console.outputs import replay
from console.outputs.view import latest_views, view_run
from console.server.sessions.kernels import NOT_STARTED

from console.server import auth, serialize
from console.server.api import rerun, run_diff
from console.server.sessions import manifests
from console.server.live.coedit import COEDIT_KEY, CoEdit
from console.server.deps import get_config, get_store
from console.server.errors import ApiError
from console.server.jobs.jobs import Params, checked_params
from console.server.deps import get_manager
from console.server.validate import body_as, query_int, typed_body

# Roles are checked before a handler runs: POLICIES in console/server/access.py names every
# endpoint here (notebook:<role> or run:<role>), so the handlers only do the work.


def _user_id() -> UserId:
    return UserId(auth.signed_in().id)


def start(user_id: UserId, notebook_id: str, mode: str, cell_id: str | None, *,
          params: Mapping[str, str] | None = None, sources: Mapping[str, str] | None = None) -> list[RunId]:
    """The one entry of a run someone asks for (the page's socket command, POST .../run): the
    kernel runs the stored source, so the live document's edits are stored first, and it must be
    what the asking page shows (`sources`: cell id -> source_digest, coedit.settle). Without it a
    REST run (the parameter form's, a script's) ran the text stored before the latest typing."""
    coedit: CoEdit | None = current_app.extensions.get(COEDIT_KEY)
    if coedit is not None:
        if not sources:
            coedit.flush(notebook_id)
        elif stale := coedit.settle(notebook_id, sources):
            raise ApiError(409, "the server does not hold this page's latest edits of the cells to run, so "
                                "nothing was run: the page syncs again; run them again", stale=stale)
    return get_manager().run(user_id, NotebookId(notebook_id), mode, CellId(cell_id) if cell_id else None,
                             params=params)


@typed_body("POST /api/notebooks/<id>/run")
@dataclass
class RunCells:
    """One of: `cell_id` (that cell), `from` (that cell and the ones after it), `all: true`."""

    cell_id: str | None = None
    from_: str | None = dataclasses.field(default=None, metadata={"json": "from"})
    all: bool = False
    params: Params | None = None  # values for the notebook's parameters (console/lang/params.py)


def run_cells(notebook_id: str) -> ResponseReturnValue:
    spec = body_as(RunCells)
    if spec.all:
        mode, cell_id = "all", None
    elif spec.from_ is not None:
        mode, cell_id = "from", spec.from_
    elif spec.cell_id is not None:
        mode, cell_id = "cell", spec.cell_id
    else:
        raise ApiError(400, "give 'cell_id', 'from' (a cell id) or 'all': true")
    params = None
    if spec.params is not None:
        params = checked_params(notebook_id, spec.params)
    ids = start(_user_id(), notebook_id, mode, cell_id, params=params)
    return jsonify({"run_ids": ids}), 202


def interrupt(notebook_id: str) -> ResponseReturnValue:
    return jsonify(get_manager().interrupt(_user_id(), NotebookId(notebook_id))), 202


def restart(notebook_id: str) -> ResponseReturnValue:
    get_manager().restart(_user_id(), NotebookId(notebook_id))
    return jsonify({}), 202


def kernel(notebook_id: str) -> ResponseReturnValue:
    kernels = [{"user_id": s.user_id, "status": s.status, "reason": s.reason}
               for s in get_manager().sessions_of(NotebookId(notebook_id)) if s.reason != NOT_STARTED]
    return jsonify({"kernels": kernels})


def notebook_runs(notebook_id: str) -> ResponseReturnValue:
    """What the notebook page draws its stored output from: the latest run of each cell."""
    cfg = get_config()
    views = latest_views(get_store(), NotebookId(notebook_id), inline_bytes=cfg.OUTPUT_INLINE_BYTES,
                         result_rows=cfg.RESULT_ROWS)
    return jsonify({"runs": {cell: serialize.run_view(v) for cell, v in views.items()}})


def _run_view(run_id: str, since: int = 0, metrics_since: int = 0) -> dict[str, Any]:
    cfg = get_config()
    view = view_run(get_store(), get_store().get_run(run_id), inline_bytes=cfg.OUTPUT_INLINE_BYTES,
                    result_rows=cfg.RESULT_ROWS, since=since, metrics_since=metrics_since)
    return serialize.run_view(view)


def get_run(run_id: str) -> ResponseReturnValue:
    return jsonify(_run_view(run_id))


def run_outputs(run_id: str) -> ResponseReturnValue:
    view = _run_view(run_id, query_int("since", 0), query_int("metrics_since", 0))
    return jsonify({"run_id": view["id"], "status": view["status"], "events": view["events"]})


def run_log(run_id: str) -> ResponseReturnValue:
    """The whole output, streamed from the run's log file as it is printed (the file's text
    unpacked here, so any client reads it, a run in flight up to its last batch)."""
    store = get_store()
    run = store.get_run(run_id)
    body = stream_with_context(replay.full_log(store, get_config().data_dir, run.id))
    return Response(body, mimetype="text/plain", headers={
        "Content-Disposition": f'attachment; filename="run-{run.id}.log"'})


def create_blueprint() -> Blueprint:
    bp = Blueprint("runs", __name__, url_prefix="/api")
    bp.add_url_rule("/notebooks/<notebook_id>/run", "run", run_cells, methods=["POST"])
    bp.add_url_rule("/notebooks/<notebook_id>/interrupt", "interrupt", interrupt, methods=["POST"])
    bp.add_url_rule("/notebooks/<notebook_id>/restart", "restart", restart, methods=["POST"])
    bp.add_url_rule("/notebooks/<notebook_id>/kernel", "kernel", kernel, methods=["GET"])
    bp.add_url_rule("/notebooks/<notebook_id>/runs", "notebook_runs", notebook_runs, methods=["GET"])
    bp.add_url_rule("/runs/<run_id>", "get_run", get_run, methods=["GET"])
    bp.add_url_rule("/runs/<run_id>/outputs", "outputs", run_outputs, methods=["GET"])
    bp.add_url_rule("/runs/<run_id>/log", "log", run_log, methods=["GET"])
    bp.add_url_rule("/runs/<run_id>/manifest", "manifest", manifests.run_manifest, methods=["GET"])
    bp.add_url_rule("/runs/<run_id>/diff/<other_id>", "diff", run_diff.run_diff, methods=["GET"])
    bp.add_url_rule("/runs/<run_id>/replay", "replay", rerun.replay, methods=["POST"])
    bp.add_url_rule("/lineage", "lineage", manifests.lineage, methods=["GET"])
    return bp
