"""Search across notebooks by name and cell text, limited to the notebooks the caller may read.

    GET /api/search?q=text[&limit=30] -> {query, notebooks: [{id, name, folder, owner, role,
        name_match, cell_matches, cells: [{id, index, kind, line, snippet, start, end}]}], truncated}

The policy row is a plain login (console/server/access.py): which notebooks are searched is decided
here, with the same role_of every notebook endpoint uses, before any cell text is read, so a
notebook the caller may not open never lends a name, a cell id or a snippet to the answer.
Matching ignores case (str.casefold); the store narrows the cells by SQL first (cells_containing).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from console.server import access
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.errors import ApiError
from console.store import NotebookInfo, NotFound

_PARAMS = ("q", "limit")
MAX_QUERY = 200
DEFAULT_LIMIT = 30
MAX_LIMIT = 100
CELLS_SHOWN = 5   # cells listed per notebook; `cell_matches` counts them all
SNIPPET = 120     # characters of the matching line around the match


@dataclass(frozen=True)
class SearchQuery:
    """A decoded search request: the text (1..MAX_QUERY characters, trimmed) and how many notebooks."""

    text: str
    limit: int


def decode_search(args: Any) -> SearchQuery:
    unknown = sorted(set(args) - set(_PARAMS))
    if unknown:
        raise ApiError(400, f"unknown parameter {', '.join(unknown)}; a search takes {', '.join(_PARAMS)}")
    text = str(args.get("q", "")).strip()
    if not text:
        raise ApiError(400, "'q' is required: the text to look for in notebook names and cells")
    if len(text) > MAX_QUERY:
        raise ApiError(400, f"'q' is at most {MAX_QUERY} characters")
    if "\x00" in text or any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        raise ApiError(400, "'q' must be plain text (no NUL, no lone surrogate)")
    raw = args.get("limit", str(DEFAULT_LIMIT))
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise ApiError(400, f"'limit' must be a whole number from 1 to {MAX_LIMIT}, not {raw!r}")
    return SearchQuery(text, int(raw))


def snippet(source: str, at: int, length: int) -> dict[str, Any]:
    """The line of `source` holding the match at `at`, cut to SNIPPET characters around it."""
    start = source.rfind("\n", 0, at) + 1
    end = source.find("\n", at)
    end = len(source) if end < 0 else end
    line = source[start:end]
    offset = at - start
    cut = max(0, min(offset - SNIPPET // 3, len(line) - SNIPPET))
    text = line[cut:cut + SNIPPET]
    return {"line": source.count("\n", 0, at) + 1, "snippet": text, "start": offset - cut,
            "end": min(offset - cut + length, len(text)), "cut": cut > 0}


def search() -> ResponseReturnValue:
    query = decode_search(request.args)
    store, user = get_store(), signed_in()
    readable: dict[str, NotebookInfo] = {nb.id: nb for nb in store.notebooks_under("/")
                                        if access.role_of(store, user, nb) is not None}
    folded = query.text.casefold()
    hits: dict[str, list[dict[str, Any]]] = {}
    counts: dict[str, int] = {}
    for notebook_id, cell in store.cells_containing(readable, query.text):
        at = cell.source.casefold().find(folded)
        if at < 0 or len(cell.source.casefold()) != len(cell.source):  # casefold changed the length:
            at = _find_folded(cell.source, folded)                       # find it character by character
        if at < 0:
            continue
        counts[notebook_id] = counts.get(notebook_id, 0) + 1
        shown = hits.setdefault(notebook_id, [])
        if len(shown) < CELLS_SHOWN:
            shown.append({"id": cell.id, "index": cell.position, "kind": cell.kind,
                          **snippet(cell.source, at, len(query.text))})
    named = {nb_id for nb_id, nb in readable.items() if folded in nb.name.casefold()}
    found = sorted(named | set(hits), key=lambda i: (i not in named, readable[i].name.casefold(), i))
    names: dict[int, str | None] = {}
    out = []
    for nb_id in found[:query.limit]:
        nb = readable[nb_id]
        out.append({"id": nb.id, "name": nb.name, "folder": nb.folder, "owner": _name(store, names, nb.owner_id),
                    "mine": nb.owner_id == user.id, "role": access.role_of(store, user, nb),
                    "name_match": nb_id in named, "cell_matches": counts.get(nb_id, 0), "cells": hits.get(nb_id, [])})
    return jsonify({"query": query.text, "notebooks": out, "truncated": len(found) > query.limit})


def _find_folded(source: str, folded: str) -> int:
    """Where `folded` starts in `source` compared casefolded, in `source`'s own offsets (-1: nowhere)."""
    for i in range(len(source)):
        if source[i:i + len(folded) + 2].casefold().startswith(folded):
            return i
    return -1


def _name(store: Any, names: dict[int, str | None], user_id: int | None) -> str | None:
    if user_id is None:
        return None
    if user_id not in names:
        try:
            names[user_id] = store.get_user(user_id).username
        except NotFound:
            names[user_id] = None
    return names[user_id]


def create_blueprint() -> Blueprint:
    bp = Blueprint("search", __name__, url_prefix="/search")
    bp.add_url_rule("", "search", search, methods=["GET"])
    return bp
