"""Run endpoints for scripts: run/interrupt/restart return 202 at once; runs, outputs and logs to read.

    POST /api/notebooks/<id>/run        {"cell_id": id} | {"all": true} | {"from": id} -> 202 {run_ids}
    POST /api/notebooks/<id>/interrupt  -> 202 {interrupted, cancelled}
    POST /api/notebooks/<id>/restart    -> 202 {}
    GET  /api/notebooks/<id>/kernel     -> {kernels: [{user_id, status, reason}]}
    GET  /api/notebooks/<id>/runs       -> {runs: {cell_id: run}} (last run per cell, output head+tail)
    GET  /api/runs/<run_id>             -> the run with its events
    GET  /api/runs/<run_id>/outputs?since=N&metrics_since=M -> {events}
    GET  /api/runs/<run_id>/log         -> the full output as text/plain (a download)
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, stream_with_context
from flask.typing import ResponseReturnValue

from console.outputs import replay
from console.server.kernels import NOT_STARTED

from console.server.access import require
from console.server.deps import get_config, get_store
from console.server.errors import ApiError
from console.server.deps import get_manager
from console.server.validate import field, json_body, query_int


def _run_view(run: Any, since: int = 0, metrics_since: int = 0) -> dict[str, Any]:
    inline = int(get_config().OUTPUT_INLINE_BYTES)
    events = replay.run_events(get_store(), run, since, metrics_since, inline)
    return {
        "id": run.id, "notebook_id": run.notebook_id, "cell_id": run.cell_id, "user_id": run.user_id,
        "status": run.status, "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "output_bytes": run.output_bytes, "log_url": replay.log_url(run.id),
        "events": [e.to_wire() for e in events],
    }


def run_cells(notebook_id: str) -> ResponseReturnValue:
    user, _ = require(notebook_id, "runner")
    body = json_body()
    if field(body, "all", bool, False):
        mode, cell_id = "all", None
    elif body.get("from") is not None:
        mode, cell_id = "from", field(body, "from", str)
    elif body.get("cell_id") is not None:
        mode, cell_id = "cell", field(body, "cell_id", str)
    else:
        raise ApiError(400, "give 'cell_id', 'from' (a cell id) or 'all': true")
    ids = get_manager().run(user.id, notebook_id, mode, cell_id)
    return jsonify({"run_ids": ids}), 202


def interrupt(notebook_id: str) -> ResponseReturnValue:
    user, _ = require(notebook_id, "runner")
    return jsonify(get_manager().interrupt(user.id, notebook_id)), 202


def restart(notebook_id: str) -> ResponseReturnValue:
    user, _ = require(notebook_id, "runner")
    get_manager().restart(user.id, notebook_id)
    return jsonify({}), 202


def kernel(notebook_id: str) -> ResponseReturnValue:
    require(notebook_id, "viewer")
    kernels = [{"user_id": s.user_id, "status": s.status, "reason": s.reason}
               for s in get_manager().sessions_of(notebook_id) if s.reason != NOT_STARTED]
    return jsonify({"kernels": kernels})


def notebook_runs(notebook_id: str) -> ResponseReturnValue:
    require(notebook_id, "viewer")
    runs = get_store().latest_runs(notebook_id, with_outputs=False)
    return jsonify({"runs": {cell: _run_view(r) for cell, r in runs.items()}})


def _readable_run(run_id: str) -> Any:
    run = get_store().get_run(run_id)
    require(run.notebook_id, "viewer")
    return run


def get_run(run_id: str) -> ResponseReturnValue:
    return jsonify(_run_view(_readable_run(run_id)))


def run_outputs(run_id: str) -> ResponseReturnValue:
    run = _readable_run(run_id)
    view = _run_view(run, query_int("since", 0), query_int("metrics_since", 0))
    return jsonify({"run_id": run.id, "status": run.status, "events": view["events"]})


def run_log(run_id: str) -> ResponseReturnValue:
    from console.store import runs_extra

    run = _readable_run(run_id)
    store = get_store()
    body = stream_with_context(replay.log_lines(runs_extra.iter_outputs(store, run.id)))
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
    return bp
