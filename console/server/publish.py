"""Read-only links: /p/<token> renders a notebook's cells and stored outputs as plain HTML (no editor,
no scripts), and GET /api/links/<token> gives the same as JSON. Nothing here runs anything.

Every value from the notebook is escaped by html.escape, and the page is served with a CSP that
forbids all scripts, so a payload in a name, a cell, a log or a table cannot execute. Metrics are
drawn as inline SVG polylines computed here. A revoked or unknown token is a 404.
"""
from __future__ import annotations

import math
from html import escape
from typing import Any

from flask import Blueprint, Response, jsonify
from flask.typing import ResponseReturnValue

from console.store import NotFound

from console.server.deps import get_config, get_store

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
_MAX_ROWS = 100


def _linked_notebook(token: str) -> tuple[Any, dict[str, Any]]:
    store = get_store()
    try:
        link = store.get_link(token)
    except NotFound:
        link = None
    if link is None or not link.active:
        raise NotFound("this link does not exist or was revoked")
    nb = store.get_notebook(link.notebook_id)
    runs = store.latest_runs(nb.id, inline_chars=get_config().OUTPUT_INLINE_BYTES)
    return nb, runs


def _run_view(run: Any) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "status": run.status,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "error": run.error,
        "result": run.result,
        "outputs": [{"text": o.text, "stream": o.stream, "source": o.source} for o in run.outputs or []],
        "omitted_chars": run.omitted_chars,
        "metrics": [{"step": m.step, "values": m.values, "source": m.source} for m in run.metrics or []],
    }


def link_view(token: str) -> dict[str, Any]:
    nb, runs = _linked_notebook(token)
    return {
        "name": nb.name, "revision": nb.revision, "updated_at": nb.updated_at.isoformat(),
        "cells": [{"id": c.id, "kind": c.kind, "source": c.source, "last_run": _run_view(runs.get(c.id))}
                  for c in nb.cells],
    }


def link_json(token: str) -> ResponseReturnValue:
    resp = jsonify(link_view(token))
    resp.headers["Cache-Control"] = "no-store"
    return resp


def _chart(metrics: list[dict[str, Any]]) -> str:
    """One small SVG line per numeric metric; values are numbers we format, never markup."""
    series: dict[str, list[float]] = {}
    for point in metrics:
        for key, value in (point.get("values") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                series.setdefault(str(key), []).append(float(value))
    parts = []
    for key, values in sorted(series.items()):
        lo, hi = min(values), max(values)
        span = (hi - lo) or 1.0
        step = 300 / max(len(values) - 1, 1)
        pts = " ".join(f"{i * step:.1f},{60 - (v - lo) / span * 55:.1f}" for i, v in enumerate(values))
        parts.append(
            f'<figure><figcaption>{escape(key)}: {escape(f"{values[-1]:.4g}")}</figcaption>'
            f'<svg viewBox="-2 0 304 64" width="304" height="64" role="img">'
            f'<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="{pts}"/></svg></figure>')
    return f'<div class="charts">{"".join(parts)}</div>' if parts else ""


def _table(result: dict[str, Any]) -> str:
    cols = [escape(str(c.get("name", ""))) for c in result.get("columns") or []]
    rows = (result.get("rows") or [])[:_MAX_ROWS]
    head = "".join(f"<th>{c}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    total = result.get("total_rows", len(rows))
    return (f'<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
            f'<p class="muted">{escape(str(len(rows)))} of {escape(str(total))} rows</p>')


def _cell_html(cell: dict[str, Any]) -> str:
    src = escape(cell["source"])
    kind = escape(cell["kind"])
    out = [f'<section class="cell {kind}"><div class="kind">{kind}</div><pre class="source">{src}</pre>']
    run = cell.get("last_run")
    if run:
        text = "".join(o["text"] for o in run["outputs"])
        if run.get("omitted_chars"):
            text += f"\n… {run['omitted_chars']} characters of output not shown …\n"
        if text:
            out.append(f'<pre class="output">{escape(text)}</pre>')
        if run.get("metrics"):
            out.append(_chart(run["metrics"]))
        if run.get("result"):
            out.append(_table(run["result"]))
        if run.get("error"):
            err = run["error"]
            msg = err.get("message", "") if isinstance(err, dict) else str(err)
            out.append(f'<pre class="error">{escape(str(msg))}</pre>')
    out.append("</section>")
    return "".join(out)


_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.6em;border-radius:4px;margin:.3em 0}
.cell{border-top:1px solid #ddd;padding:.6em 0}.kind{font-size:11px;color:#888;text-transform:uppercase}
.output{background:#fff;border:1px solid #eee}.error{background:#fee;color:#900}
.markdown .source{background:none;font-family:inherit}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}.muted{color:#888;font-size:12px}
figure{display:inline-block;margin:.3em 1em .3em 0}figcaption{font-size:12px;color:#555}
"""


def page(token: str) -> ResponseReturnValue:
    view = link_view(token)
    cells = "".join(_cell_html(c) for c in view["cells"])
    html = (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="robots" content="noindex"><title>{escape(view["name"])}</title>'
            f'<style>{_STYLE}</style></head><body><header><h1>{escape(view["name"])}</h1>'
            f'<p class="muted">read-only view, revision {escape(str(view["revision"]))}</p></header>'
            f'<main>{cells}</main></body></html>')
    resp = Response(html, mimetype="text/html")
    resp.headers["Content-Security-Policy"] = CSP
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["Referrer-Policy"] = "no-referrer"  # the token is in the URL: keep it off other sites
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


def create_blueprint() -> Blueprint:
    bp = Blueprint("publish", __name__)
    bp.add_url_rule("/p/<token>", "page", page, methods=["GET"])
    bp.add_url_rule("/api/links/<token>", "link", link_json, methods=["GET"])
    return bp
