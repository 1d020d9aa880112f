"""Completion and hover for the editor, answered by the caller's own kernel from its live catalog.

    POST /api/notebooks/<id>/complete {source, cursor, kind} -> {from, to, items: [{label, type, detail}], kernel}
    GET  /api/notebooks/<id>/inspect?name=t                  -> {name, rows, columns: [{name, type}]}

The kernel is the caller's (one per user and notebook), so only those who may run the notebook
ask (POLICIES in console/server/access.py). Without a running kernel, completion answers no
items and `kernel: false`, and the page offers its own keywords; inspect answers 409 (a state
the caller changes by running the cell that makes the table, not a 404 that reads like "no access").
"""
from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from console.ids import NotebookId, UserId
from console.server import auth
from console.server.deps import get_manager
from console.server.errors import ApiError
from console.server.validate import typed_body, body_as

TIMEOUT = 5.0  # seconds: the kernel answers between statements even while a cell runs
MAX_SOURCE = 200_000  # characters of cell text worth completing in


@typed_body("POST /api/notebooks/<id>/complete")
@dataclass
class Completion:
    source: str
    cursor: int | None = None  # at the end of `source` when left out
    kind: str = "mlsql"


def complete(notebook_id: str) -> ResponseReturnValue:
    spec = body_as(Completion)
    source, kind = spec.source, spec.kind
    if len(source) > MAX_SOURCE:
        raise ApiError(400, f"'source' is {len(source)} characters; completion takes at most {MAX_SOURCE}")
    cursor = len(source) if spec.cursor is None else spec.cursor
    if kind not in ("mlsql", "python", "sql"):
        raise ApiError(400, f"'kind' must be mlsql, python or sql, not {kind!r}")
    if not 0 <= cursor <= len(source):
        raise ApiError(400, f"'cursor' must be between 0 and {len(source)}, not {cursor}")
    user_id = UserId(auth.signed_in().id)
    try:
        answer = get_manager().query(user_id, NotebookId(notebook_id), "complete",
                                     {"source": source, "cursor": cursor, "kind": kind}, timeout=TIMEOUT)
    except (LookupError, TimeoutError):  # no kernel yet, or busy past the timeout: the page's own keywords
        return jsonify({"from": cursor, "to": cursor, "items": [], "kernel": False})
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    return jsonify({**answer, "kernel": True})


def inspect(notebook_id: str) -> ResponseReturnValue:
    name = request.args.get("name", "")
    if not name:
        raise ApiError(400, "give ?name= (a table of the session)")
    user_id = UserId(auth.signed_in().id)
    try:
        answer = get_manager().query(user_id, NotebookId(notebook_id), "inspect", {"name": name}, timeout=TIMEOUT)
    except (LookupError, TimeoutError) as exc:
        raise ApiError(409, str(exc.args[0]) if exc.args else "run a cell first") from None
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    return jsonify(answer)


def create_blueprint() -> Blueprint:
    bp = Blueprint("complete", __name__, url_prefix="/notebooks/<notebook_id>")
    bp.add_url_rule("/complete", "complete", complete, methods=["POST"])
    bp.add_url_rule("/inspect", "inspect", inspect, methods=["GET"])
    return bp
