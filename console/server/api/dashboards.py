"""Dashboards (issue 34 item 5): a notebook's pinned results and charts as a grid, at /d/<id>.

    GET    /d/<notebook_id>                                    the page (the single-page frontend)
    GET    /api/notebooks/<id>/dashboard                       -> the dashboard with each tile's latest run
    PUT    /api/notebooks/<id>/dashboard   {tiles, base_revision?}       -> the dashboard (editors)
    POST   /api/notebooks/<id>/dashboard/tiles   {cell_id, kind, width?, height?} -> 201 / 200 (editors)
    DELETE /api/notebooks/<id>/dashboard/tiles/<kind>/<cell_id>          -> the dashboard (editors)
    GET    /p/<token>/dashboard, /api/links/<token>/dashboard   the same through a read-only link

A dashboard is one per notebook (its id is the notebook's). A tile shows the latest stored run of
its cell, as the notebook page and the published page read it (console/outputs/view.py
`latest_views`), so a Run all, a Refresh with parameters (the page calls the run endpoint, which
its own policy row keeps to runners) or a job run of the notebook changes what the tiles show.

Roles come from the one policy table (console/server/access.py): viewers read, editors pin and
arrange. Bodies are the dataclasses below, decoded by console/server/validate.py `body_as` (a tile
inside PUT's `tiles` too): every field typed and bounded by its annotation, unknown fields refused,
each error a 400 naming the field by its path ('tiles[2].width'). A read-only link (/p/<token>,
console/server/api/publish.py) also shows its notebook's dashboard: it holds nothing the link's page
does not show already (the tiles are cells' latest runs, drawn through the same `published_run`,
without run ids), never the parameters' form or anything that runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from console.ids import NotebookId
from console.outputs.view import RunView, latest_views
from console.roles import at_least
from console.store import NotebookRecord
from console.store.dashboards import (
    DEFAULT_HEIGHT, DEFAULT_WIDTH, MAX_HEIGHT, MAX_TILES, MAX_WIDTH, TILE_KINDS, DashboardRecord, Tile,
)

from console.server import access, auth
from console.server.deps import get_config, get_store
from console.server.errors import ApiError
from console.server.jobs.jobrun import cell_label, declared_params
from console.server.pages import index
from console.server.api.publish import link_response, linked_notebook, published_run
from console.server.validate import Check, body_as, typed_body
from console.wire.codec import Max, Range

ID_CHARS = 32
_BUSY = ("queued", "running")


def _cell_id(value: str) -> bool:
    return 0 < len(value) <= ID_CHARS and value.isascii() and value.replace("_", "").replace("-", "").isalnum()


TileKind = Literal["result", "chart"]
assert get_args(TileKind) == TILE_KINDS, "TileKind is the store's TILE_KINDS"


@typed_body("POST /api/notebooks/<id>/dashboard/tiles")
@dataclass(frozen=True)
class TileBody:
    """One tile as a body names it: POST's whole body, or one of PUT's `tiles`."""

    cell_id: Annotated[str, Check(_cell_id, "is not a cell id")]
    kind: TileKind
    width: Annotated[int, Range(1, MAX_WIDTH)] = DEFAULT_WIDTH  # columns of the grid
    height: Annotated[int, Range(1, MAX_HEIGHT)] = DEFAULT_HEIGHT

    def tile(self) -> Tile:
        return Tile(self.cell_id, self.kind, self.width, self.height)


@typed_body("PUT /api/notebooks/<id>/dashboard")
@dataclass(frozen=True)
class DashboardBody:
    """PUT: the whole list of tiles, in the page's order; base_revision None = whatever is there."""

    tiles: Annotated[list[TileBody], Max(MAX_TILES)]
    base_revision: int | None = None


def decode_dashboard() -> DashboardBody:
    """The PUT body: each tile checked by body_as, then a cell's result and chart at most once each."""
    spec = body_as(DashboardBody)
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(spec.tiles):
        if (t.cell_id, t.kind) in seen:
            raise ApiError(400, f"'tiles[{i}]': that cell's {t.kind} is on the dashboard already")
        seen.add((t.cell_id, t.kind))
    return spec


# ------------------------------------------------------------------ answers


def _tiles_json(nb: NotebookRecord, dash: DashboardRecord, views: dict[str, RunView]) -> list[dict[str, Any]]:
    cells = {c.id: (i + 1, c) for i, c in enumerate(nb.cells)}
    out = []
    for t in dash.tiles:
        position, cell = cells.get(t.cell_id, (None, None))
        view = views.get(t.cell_id) if cell is not None else None
        out.append({
            **t.plain(),
            "cell": None if cell is None else {
                "position": position, "kind": cell.kind, "title": cell_label(position, cell.source),
                "view": cell.view},
            "run": published_run(view),
        })
    return out


def _dashboard_json(nb: NotebookRecord, dash: DashboardRecord) -> dict[str, Any]:
    cfg = get_config()
    views = latest_views(get_store(), NotebookId(nb.id), inline_bytes=cfg.OUTPUT_INLINE_BYTES,
                         result_rows=cfg.RESULT_ROWS)
    shown = {t.cell_id for t in dash.tiles}
    return {
        "notebook_id": nb.id, "name": nb.name, "revision": dash.revision,
        "updated_at": dash.updated_at.isoformat() if dash.updated_at else None,
        "tiles": _tiles_json(nb, dash, views),
        # A Refresh is over when no run of the notebook is queued or running.
        "running": any(v.run.status in _BUSY for v in views.values()),
        "tiles_running": any(v.run.status in _BUSY for c, v in views.items() if c in shown),
        "markdown_remote_images": bool(cfg.MARKDOWN_REMOTE_IMAGES),
    }


def _answer(notebook_id: str, dash: DashboardRecord | None = None, status: int = 200) -> ResponseReturnValue:
    store = get_store()
    nb = store.get_notebook(notebook_id)
    user = auth.signed_in()
    role = access.role_of(store, user, store.get_notebook_info(notebook_id))
    d = _dashboard_json(nb, dash or store.get_dashboard(notebook_id))
    d.update(role=role, can_edit=at_least(role, "editor"), can_run=at_least(role, "runner"),
             # the notebook's parameters (`set x = "…" where type="defaultParam"`), the page's inputs
             params=[{"name": p.name, "default": p.default} for p in declared_params(store, notebook_id)])
    resp = jsonify(d)
    resp.status_code = status
    resp.headers["Cache-Control"] = "no-store"
    return resp


# ------------------------------------------------------------------ endpoints


def get_dashboard(notebook_id: str) -> ResponseReturnValue:
    return _answer(notebook_id)


def replace(notebook_id: str) -> ResponseReturnValue:
    spec = decode_dashboard()
    dash = get_store().set_dashboard(notebook_id, [t.tile() for t in spec.tiles], auth.signed_in().id,
                                     base_revision=spec.base_revision)
    return _answer(notebook_id, dash)


def pin(notebook_id: str) -> ResponseReturnValue:
    tile = body_as(TileBody)
    dash, added = get_store().pin_tile(notebook_id, tile.tile(), auth.signed_in().id)
    return _answer(notebook_id, dash, 201 if added else 200)


def unpin(notebook_id: str, kind: str, cell_id: str) -> ResponseReturnValue:
    dash = get_store().unpin_tile(notebook_id, cell_id, kind, auth.signed_in().id)
    return _answer(notebook_id, dash)


def page(notebook_id: str) -> ResponseReturnValue:
    return index(notebook_id)  # the single page; its data comes from GET .../dashboard (its own row)


# ------------------------------------------------------------------ through a read-only link


def link_view(token: str) -> dict[str, Any]:
    nb, _ = linked_notebook(token, with_views=False)  # NotFound (404) for a revoked or unknown token
    return {**_dashboard_json(nb, get_store().get_dashboard(nb.id)), "notebook_id": None,
            "can_edit": False, "can_run": False, "params": [], "link": True}


def link_json(token: str) -> ResponseReturnValue:
    resp = jsonify(link_view(token))
    resp.headers["Cache-Control"] = "no-store"
    return resp


def link_page(token: str) -> ResponseReturnValue:
    data = link_view(token)
    remote_images = bool(data["markdown_remote_images"])
    return link_response("dashboard.html", remote_images, name=data["name"], data=data)


def create_blueprint() -> Blueprint:
    bp = Blueprint("dashboards", __name__)
    bp.add_url_rule("/d/<notebook_id>", "page", page, methods=["GET"])
    api = "/api/notebooks/<notebook_id>/dashboard"
    bp.add_url_rule(api, "get", get_dashboard, methods=["GET"])
    bp.add_url_rule(api, "replace", replace, methods=["PUT"])
    bp.add_url_rule(f"{api}/tiles", "pin", pin, methods=["POST"])
    bp.add_url_rule(f"{api}/tiles/<kind>/<cell_id>", "unpin", unpin, methods=["DELETE"])
    bp.add_url_rule("/p/<token>/dashboard", "link_page", link_page, methods=["GET"])
    bp.add_url_rule("/api/links/<token>/dashboard", "link", link_json, methods=["GET"])
    return bp
