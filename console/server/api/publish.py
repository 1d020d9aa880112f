"""Read-only links: /p/<token> shows a notebook's cells and stored outputs as the app's read-only
view does, and GET /api/links/<token> gives the same as JSON. Nothing here runs anything.

Runs are shown through the one stored-run view (console/outputs/view.py): the same output head,
hidden marker and tail as the notebook page, the first RESULT_ROWS rows of a result. The page
(templates/publish.html) carries that JSON in an inert attribute, which our own bundle
(frontend/src/publish.js, static/dist/publish.js) draws with the app's own components: the same
output model (so Keras's \r redraws collapse), typed tables, the cell's saved chart, the metrics
chart with axes, long logs folded. It is served under the app's CSP (scripts from this site only,
never inline), and everything is put in as text. Without scripts the page shows a plain rendering
of the same data (escaped by Jinja's autoescape), with metrics as small SVG lines computed here.
A revoked or unknown token is a 404.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, render_template
from flask.typing import ResponseReturnValue

from console.ids import NotebookId
from console.outputs.view import RunView, latest_views
from console.store import CellRecord, MetricRecord, NotebookRecord, NotFound

from console.server.deps import get_config, get_store
from console.server.pages import page_csp
from console.server.api.tracebacks import published_error


@dataclass(frozen=True)
class Chart:
    """One numeric metric as a small line: its name, its last value, the polyline's points."""

    key: str
    last: str
    points: str


@dataclass(frozen=True)
class ShownCell:
    cell: CellRecord
    run: RunView | None
    charts: list[Chart]


def linked_notebook(token: str, with_views: bool = True) -> tuple[NotebookRecord, dict[str, RunView]]:
    """The notebook of an active link and its cells' latest runs (none without with_views); NotFound
    (a 404) for a revoked or unknown token. The link's dashboard (console/server/api/dashboards.py) asks too."""
    store = get_store()
    try:
        link = store.get_link(token)
    except NotFound:
        link = None
    if link is None or not link.active:
        raise NotFound("this link does not exist or was revoked")
    nb = store.get_notebook(link.notebook_id)
    if not with_views:
        return nb, {}
    cfg = get_config()
    views = latest_views(store, NotebookId(nb.id), inline_bytes=cfg.OUTPUT_INLINE_BYTES, result_rows=cfg.RESULT_ROWS)
    return nb, views


def published_run(view: RunView | None) -> dict[str, Any] | None:
    """A stored run as a link shows it (a dashboard's tiles too): no run ids, the cell's own frames."""
    if view is None:
        return None
    run = view.run
    return {
        "status": run.status,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        # The message and the cell's own frames; library frames name the server's files.
        "error": _without_ids(published_error(view.error.to_wire())) if view.error else None,
        "result": _without_ids(view.result.to_wire()) if view.result else None,
        "outputs": [{"seq": o.seq, "text": o.text, "stream": o.stream, "source": o.source}
                    for o in view.head + view.tail],
        "head_count": len(view.head),  # outputs[:head_count] come before the hidden middle
        "elapsed_ms": view.elapsed_ms,
        # Output between the head and the tail that is not shown (None when all of it is).
        "hidden": None if view.hidden is None else {
            "first_seq": view.hidden.first_seq, "last_seq": view.hidden.last_seq,
            "hidden_bytes": view.hidden.hidden_bytes},
        "metrics": [{"step": m.step, "values": m.values, "source": m.source} for m in view.metrics],
    }


_IDS = ("notebook_id", "cell_id", "run_id")


def _without_ids(event: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored event as a link shows it: without the run's ids, which only members may use (a run id
    named events of someone else's run, issue 21), and which a page of cells in order does not need."""
    return None if event is None else {k: v for k, v in event.items() if k not in _IDS}


def link_view(token: str) -> dict[str, Any]:
    return _view_data(*linked_notebook(token))


def _view_data(nb: NotebookRecord, views: dict[str, RunView]) -> dict[str, Any]:
    return {
        "name": nb.name, "revision": nb.revision, "updated_at": nb.updated_at.isoformat(),
        "cells": [{"id": c.id, "kind": c.kind, "source": c.source, "view": c.view,
                   "last_run": published_run(views.get(c.id))} for c in nb.cells],
    }


def link_json(token: str) -> ResponseReturnValue:
    resp = jsonify(link_view(token))
    resp.headers["Cache-Control"] = "no-store"
    return resp


def charts(metrics: list[MetricRecord]) -> list[Chart]:
    """One small line per numeric metric; its values are numbers we format, never markup."""
    series: dict[str, list[float]] = {}
    for point in metrics:
        for key, value in (point.values or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                series.setdefault(str(key), []).append(float(value))
    drawn = []
    for key, values in sorted(series.items()):
        lo, hi = min(values), max(values)
        span = (hi - lo) or 1.0
        step = 300 / max(len(values) - 1, 1)
        points = " ".join(f"{i * step:.1f},{60 - (v - lo) / span * 55:.1f}" for i, v in enumerate(values))
        drawn.append(Chart(key, f"{values[-1]:.4g}", points))
    return drawn


def page(token: str) -> ResponseReturnValue:
    nb, views = linked_notebook(token)
    cells = []
    for c in nb.cells:
        view = views.get(c.id)
        cells.append(ShownCell(c, view, charts(view.metrics) if view else []))
    remote_images = bool(current_app.extensions["config"].MARKDOWN_REMOTE_IMAGES)
    # What GET /api/links/<token> answers, for the page's bundle to draw.
    data = {**_view_data(nb, views), "markdown_remote_images": remote_images}
    return link_response("publish.html", remote_images, nb=nb, cells=cells, data=data)


def link_response(template: str, remote_images: bool, **context: Any) -> Response:
    """A page reached by a link's token (/p/<token>, its dashboard): rendered with the headers that
    keep the token and the page to themselves."""
    resp = Response(render_template(template, **context), mimetype="text/html")
    resp.headers["Content-Security-Policy"] = page_csp(remote_images)
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["Referrer-Policy"] = "no-referrer"  # the token is in the URL: keep it off other sites
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


def create_blueprint() -> Blueprint:
    bp = Blueprint("publish", __name__)
    bp.add_url_rule("/p/<token>", "page", page, methods=["GET"])
    bp.add_url_rule("/api/links/<token>", "link", link_json, methods=["GET"])
    return bp
