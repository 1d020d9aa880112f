"""Revision endpoints: list a notebook's history (authors, labels), read one snapshot, name the
current content as a version, diff any two, restore. The settler (console/server/live/history.py) makes
the revisions of settled edits."""
from __future__ import annotations

from dataclasses import dataclass

import difflib
from typing import Any

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue

from console.store import NotFound

from console.server import serialize
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.errors import ApiError
from console.server.live.history import init_settler
from console.server.validate import typed_body, body_as, query_int, revision_given


def list_revisions(notebook_id: str) -> ResponseReturnValue:
    store = get_store()
    names: dict[int, str | None] = {}

    def name(user_id: int) -> str | None:
        if user_id not in names:
            try:
                names[user_id] = store.get_user(user_id).username
            except NotFound:  # the account was deleted
                names[user_id] = None
        return names[user_id]

    out = []
    for rev in store.list_revisions(notebook_id):
        d = serialize.plain(rev)
        d["author"] = name(rev.author_id) if rev.author_id is not None else None
        d["author_ids"] = list(rev.authors)
        d["authors"] = [n for n in (name(a) for a in rev.authors) if n is not None]
        out.append(d)
    return jsonify({"revisions": out})


def _store_live_edits(notebook_id: str) -> None:
    """Store the notebook's live document now (co-editing saves it a moment after the last keystroke)."""
    from console.server.live.coedit import COEDIT_KEY

    coedit = current_app.extensions.get(COEDIT_KEY)
    if coedit is not None:
        coedit.flush(notebook_id)


@typed_body("POST /api/notebooks/<id>/revisions")
@dataclass
class NewVersion:
    label: str | None = None  # 1-200 characters; left out: an unnamed version


@typed_body("POST /api/notebooks/<id>/revisions/<n>/restore")
@dataclass
class Restore:
    base_revision: int | None = None


def save_version(notebook_id: str) -> ResponseReturnValue:
    """POST .../revisions {label?}: the current content as a named version ("Save version…")."""
    label = body_as(NewVersion, required=False).label
    if label is not None and not label.strip():
        raise ApiError(400, "a version's label must not be blank (leave it out for an unnamed version)")
    _store_live_edits(notebook_id)
    rev = get_store().snapshot_notebook(notebook_id, author_id=signed_in().id, label=label)
    return jsonify(serialize.plain(rev)), 201


def get_revision(notebook_id: str, number: int) -> ResponseReturnValue:
    return jsonify(serialize.plain(get_store().get_revision(notebook_id, number)))


def first_line(source: str, limit: int = 60) -> str:
    """What a person recognises a cell by: its first line with text, shortened."""
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit - 1] + "…"


def cell_diffs(old: dict[str, Any], new: dict[str, Any], old_label: str, new_label: str) -> list[dict[str, Any]]:
    """Per cell (matched by id, in the newer order, then removed ones): status and a unified diff.

    Each cell is named as a person sees it: its position (in the newer revision; a removed cell's
    in the older one) and the first line of its source (`title`).
    """
    before = {c["id"]: c for c in old.get("cells", []) if "id" in c}
    after = {c["id"]: c for c in new.get("cells", []) if "id" in c}
    pos_before = {cid: i + 1 for i, cid in enumerate(before)}
    pos_after = {cid: i + 1 for i, cid in enumerate(after)}
    out = []
    for cid in list(after) + [c for c in before if c not in after]:
        a, b = before.get(cid), after.get(cid)
        src_a, src_b = (a or {}).get("source", ""), (b or {}).get("source", "")
        status = "added" if a is None else "removed" if b is None else \
            "same" if src_a == src_b and a.get("kind") == b.get("kind") else "changed"
        diff = "".join(difflib.unified_diff(
            src_a.splitlines(keepends=True), src_b.splitlines(keepends=True),
            f"{old_label}/{cid}", f"{new_label}/{cid}")) if status != "same" else ""
        kind = (b or a or {}).get("kind")
        position = pos_after.get(cid) or pos_before[cid]
        line = first_line(src_b if b is not None else src_a)
        out.append({"id": cid, "kind": kind, "status": status, "diff": diff, "position": position,
                    "moved_from": pos_before.get(cid) if a is not None and b is not None
                    and pos_before.get(cid) != position else None,
                    "title": f"cell {position} ({kind})" + (f": {line}" if line else "")})
    return out


def diff_revisions(notebook_id: str) -> ResponseReturnValue:
    """GET .../revisions/diff?from=A&to=B: any two revisions; without `to`, the current content
    (which may be newer than the last history row while edits have not settled)."""
    store = get_store()
    old_n = query_int("from")
    to = query_int("to", None)
    old = store.get_revision(notebook_id, old_n)
    if to is None:
        nb = store.get_notebook(notebook_id)
        new_n, new_label = nb.revision, None
        new_snapshot: dict[str, Any] = {"name": nb.name, "cells": [
            {"id": c.id, "kind": c.kind, "source": c.source} for c in nb.cells]}
    else:
        new = store.get_revision(notebook_id, to)
        new_n, new_label, new_snapshot = to, new.label, new.snapshot
    return jsonify({
        "from": old_n, "to": new_n,
        "label": {"from": old.label, "to": new_label},
        "name": {"from": old.snapshot.get("name"), "to": new_snapshot.get("name")},
        "cells": cell_diffs(old.snapshot, new_snapshot, f"r{old_n}", f"r{new_n}"),
    })


def restore_revision(notebook_id: str, number: int) -> ResponseReturnValue:
    base = body_as(Restore, required=False).base_revision
    _store_live_edits(notebook_id)  # what was typed live is kept in the history before the restore
    nb = get_store().restore_revision(notebook_id, number, revision_given(base, required=False),
                                      author_id=signed_in().id)
    return jsonify(serialize.notebook(nb))


def create_blueprint() -> Blueprint:
    bp = Blueprint("revisions", __name__, url_prefix="/notebooks/<notebook_id>/revisions")
    bp.add_url_rule("", "list", list_revisions, methods=["GET"])
    bp.add_url_rule("", "save", save_version, methods=["POST"])
    bp.record_once(lambda state: init_settler(state.app))
    bp.add_url_rule("/diff", "diff", diff_revisions, methods=["GET"])
    bp.add_url_rule("/<int:number>", "get", get_revision, methods=["GET"])
    bp.add_url_rule("/<int:number>/restore", "restore", restore_revision, methods=["POST"])
    return bp
