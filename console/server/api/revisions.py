"""Revision endpoints: list a notebook's history (with authors), read one snapshot, diff two, restore."""
from __future__ import annotations

import difflib
from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from console.store import NotFound

from console.server import serialize
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.validate import base_revision, json_body, query_int


def list_revisions(notebook_id: str) -> ResponseReturnValue:
    store = get_store()
    names: dict[int, str | None] = {}
    out = []
    for rev in store.list_revisions(notebook_id):
        d = serialize.plain(rev)
        if rev.author_id is not None and rev.author_id not in names:
            try:
                names[rev.author_id] = store.get_user(rev.author_id).username
            except NotFound:
                names[rev.author_id] = None
        d["author"] = names.get(rev.author_id) if rev.author_id is not None else None
        out.append(d)
    return jsonify({"revisions": out})


def get_revision(notebook_id: str, number: int) -> ResponseReturnValue:
    return jsonify(serialize.plain(get_store().get_revision(notebook_id, number)))


def cell_diffs(old: dict[str, Any], new: dict[str, Any], old_label: str, new_label: str) -> list[dict[str, Any]]:
    """Per cell (matched by id, in the newer order, then removed ones): status and a unified diff."""
    before = {c["id"]: c for c in old.get("cells", []) if "id" in c}
    after = {c["id"]: c for c in new.get("cells", []) if "id" in c}
    out = []
    for cid in list(after) + [c for c in before if c not in after]:
        a, b = before.get(cid), after.get(cid)
        src_a, src_b = (a or {}).get("source", ""), (b or {}).get("source", "")
        status = "added" if a is None else "removed" if b is None else \
            "same" if src_a == src_b and a.get("kind") == b.get("kind") else "changed"
        diff = "".join(difflib.unified_diff(
            src_a.splitlines(keepends=True), src_b.splitlines(keepends=True),
            f"{old_label}/{cid}", f"{new_label}/{cid}")) if status != "same" else ""
        out.append({"id": cid, "kind": (b or a or {}).get("kind"), "status": status, "diff": diff})
    return out


def diff_revisions(notebook_id: str) -> ResponseReturnValue:
    """GET .../revisions/diff?from=A&to=B (to defaults to the current revision)."""
    store = get_store()
    old_n = query_int("from")
    new_n = query_int("to", None) or store.get_notebook_info(notebook_id).revision
    old, new = store.get_revision(notebook_id, old_n), store.get_revision(notebook_id, new_n)
    return jsonify({
        "from": old_n, "to": new_n,
        "name": {"from": old.snapshot.get("name"), "to": new.snapshot.get("name")},
        "cells": cell_diffs(old.snapshot, new.snapshot, f"r{old_n}", f"r{new_n}"),
    })


def restore_revision(notebook_id: str, number: int) -> ResponseReturnValue:
    body = json_body(required=False)
    nb = get_store().restore_revision(notebook_id, number, base_revision(body, required=False),
                                      author_id=signed_in().id)
    return jsonify(serialize.notebook(nb))


def create_blueprint() -> Blueprint:
    bp = Blueprint("revisions", __name__, url_prefix="/notebooks/<notebook_id>/revisions")
    bp.add_url_rule("", "list", list_revisions, methods=["GET"])
    bp.add_url_rule("/diff", "diff", diff_revisions, methods=["GET"])
    bp.add_url_rule("/<int:number>", "get", get_revision, methods=["GET"])
    bp.add_url_rule("/<int:number>/restore", "restore", restore_revision, methods=["POST"])
    return bp
