"""What changed between two runs (issue 32 item 4): `GET /api/runs/<run_id>/diff/<other_id>`.

Both runs' manifests side by side, as the store kept them when each ended (console/server/sessions/manifests.py):
the notebook revision each ran (and, for two runs of one notebook, the cells that differ between
those revisions, as the history's diff shows them), the parameters, the environment's lock, and the
version of each delta table read and written. Only what both runs' viewers may see: the policy
table checks the first run (`runs.diff`: its notebook's viewers), the handler the second.

"Same" means the recorded facts match: same revision (or the same cells' text), parameters, lock,
table versions and result (row count, columns, and a digest of the rows the store keeps: the first
RESULT_ROWS, so two results that differ only further down are not told apart). A plain file's
facts (size, modification time, digest of its first bytes) are compared too, as the kernel reported
them: they say a file changed, never that it did not.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import jsonify
from flask.typing import ResponseReturnValue

from console.server import access
from console.server.api.revisions import cell_diffs
from console.server.deps import get_store
from console.server.sessions.manifests import lake_name
from console.store import NotFound, RunRecord
from console.store.manifests import ManifestRecord

_FACTS = ("version", "size", "mtime", "digest", "files")


def run_diff(run_id: str, other_id: str) -> ResponseReturnValue:
    store = get_store()
    a, b = store.get_run(run_id), store.get_run(other_id)
    access.require(b.notebook_id, "viewer")  # the first run's notebook: the policy table's row
    ma, mb = store.get_manifest(run_id), store.get_manifest(other_id)
    body: dict[str, Any] = {"a": _side(a, ma), "b": _side(b, mb)}
    if ma is None or mb is None:  # in flight, or from before manifests: nothing recorded to compare
        body.update({"comparable": False, "same": False, "revision": None, "params": [], "environment": None,
                     "inputs": [], "outputs": [], "result": _results(a, b)})
        return jsonify(body)
    body["comparable"] = True
    body["revision"] = _revisions(a, ma, b, mb)
    body["params"] = [{"name": k, "a": ma.params.get(k), "b": mb.params.get(k)}
                      for k in sorted(set(ma.params) | set(mb.params)) if ma.params.get(k) != mb.params.get(k)]
    body["environment"] = {"a": ma.lock_hash, "b": mb.lock_hash, "same": ma.lock_hash == mb.lock_hash}
    body["inputs"] = _data(ma, mb, "read")
    body["outputs"] = _data(ma, mb, "write")
    body["result"] = _results(a, b)
    body["same"] = (body["revision"]["same"] and not body["params"] and body["environment"]["same"]
                    and not any(d["changed"] for d in body["inputs"] + body["outputs"]) and body["result"]["same"])
    return jsonify(body)


def _results(a: RunRecord, b: RunRecord) -> dict[str, Any]:
    """The two results as the store keeps them: row count, columns (name and type) and a digest of
    the rows kept (the first RESULT_ROWS), and which of these differ."""
    fa, fb = result_facts(a.result), result_facts(b.result)
    differs = [k for k in ("total_rows", "columns", "digest") if (fa or {}).get(k) != (fb or {}).get(k)]
    return {"a": fa, "b": fb, "differs": differs, "same": not differs}


def result_facts(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A result's row count, columns and the digest of the rows given (`mlsql-console replay` too)."""
    if not result:
        return None
    rows = json.dumps(result.get("rows", []), sort_keys=True, separators=(",", ":"), default=str)
    return {"total_rows": result.get("total_rows"), "columns": result.get("columns", []),
            "kept_rows": len(result.get("rows", [])), "digest": "sha256:" + hashlib.sha256(rows.encode()).hexdigest()}


def _side(run: RunRecord, m: ManifestRecord | None) -> dict[str, Any]:
    return {"run_id": run.id, "notebook_id": run.notebook_id, "cell_id": run.cell_id, "status": run.status,
            "started_at": run.started_at.isoformat() if run.started_at else None, "recorded": m is not None,
            "revision": m.revision if m else None, "params": m.params if m else {},
            "lock_hash": m.lock_hash if m else ""}


def _revisions(a: RunRecord, ma: ManifestRecord, b: RunRecord, mb: ManifestRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"a": ma.revision, "b": mb.revision, "cells": []}
    if ma.revision == mb.revision and a.notebook_id == b.notebook_id:
        out["same"] = True
        return out
    if a.notebook_id != b.notebook_id or ma.revision is None or mb.revision is None:
        out["same"] = False  # other notebooks, or a revision not recorded: no cell diff to show
        return out
    try:
        old = store_snapshot(a.notebook_id, ma.revision)
        new = store_snapshot(b.notebook_id, mb.revision)
    except NotFound:  # a revision the history no longer holds
        out["same"] = False
        return out
    cells = [c for c in cell_diffs(old, new, f"r{ma.revision}", f"r{mb.revision}") if c["status"] != "same"]
    out.update(cells=cells, same=not cells)
    return out


def store_snapshot(notebook_id: str, number: int) -> dict[str, Any]:
    snapshot: dict[str, Any] = get_store().get_revision(notebook_id, number).snapshot
    return snapshot


def _data(ma: ManifestRecord, mb: ManifestRecord, access_kind: str) -> list[dict[str, Any]]:
    """Each table or path one of the runs read (or wrote), with both runs' facts about it."""
    def facts(m: ManifestRecord) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for e in m.entries:
            if e.get("access") == access_kind:
                path = str(e.get("path", ""))
                key = (lake_name(path) or path) if str(e.get("format", "")).lower() == "delta" else path
                out[key] = {k: e[k] for k in _FACTS if k in e} | {"format": e.get("format", "")}
        return out

    fa, fb = facts(ma), facts(mb)
    return [{"name": name, "a": fa.get(name), "b": fb.get(name), "changed": fa.get(name) != fb.get(name)}
            for name in sorted(set(fa) | set(fb))]


__all__ = ["result_facts", "run_diff"]
