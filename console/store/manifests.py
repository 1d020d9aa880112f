"""Run manifests: what a run read and wrote, the revision and the parameters it ran with.

One row per run, written once when the run ends (console/server/sessions/manifests.py decides what goes
in it: the kernel's entries, capped and checked against the lake). The store only keeps the row;
it neither opens a path nor trusts an entry.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from console.ids import CellId, NotebookId, RunId, UserId
from console.store.db import StoreBase
from console.store.errors import NotFound
from console.store.models import Run, RunManifest, utcnow


@dataclass(frozen=True)
class ManifestRecord:
    run_id: RunId
    revision: int | None
    params: dict[str, str]
    entries: list[dict[str, Any]]
    dropped: int
    created_at: datetime
    lock_hash: str = ""  # the notebook environment's lock the run ran in ("": the base)
    replay_of: str = ""  # a replay: the recorded run it ran as


@dataclass(frozen=True)
class ManifestRun:
    """A manifest with who ran what and when: a row of a table's lineage."""

    manifest: ManifestRecord
    notebook_id: NotebookId
    cell_id: CellId
    user_id: UserId | None
    started_at: datetime
    status: str


def _record(m: RunManifest) -> ManifestRecord:
    return ManifestRecord(RunId(m.run_id), m.revision, dict(m.params or {}), list(m.entries or []), m.dropped,
                          m.created_at, m.lock_hash or "", m.replay_of or "")


def put_manifest(s: Session, run_id: str, manifest: Mapping[str, Any]) -> RunManifest:
    """Write (or replace) a run's manifest row in the open transaction `s`: {revision, params,
    entries, dropped, lock_hash, replay_of} (finish_run writes it with the run's end, in one commit)."""
    row = s.get(RunManifest, run_id)
    if row is None:
        row = RunManifest(run_id=run_id)
        s.add(row)
    row.revision, row.params = manifest.get("revision"), dict(manifest.get("params") or {})
    row.entries, row.dropped = list(manifest.get("entries") or []), int(manifest.get("dropped") or 0)
    row.lock_hash = str(manifest.get("lock_hash") or "")[:64]
    row.replay_of = str(manifest.get("replay_of") or "")[:64]
    row.created_at = utcnow()
    return row


class ManifestsMixin(StoreBase):
    def save_manifest(self, run_id: str, revision: int | None, params: Mapping[str, str],
                      entries: list[dict[str, Any]], dropped: int = 0) -> ManifestRecord:
        """Keep a run's manifest (a second call for the same run replaces the first)."""
        with self._write() as s:
            if s.get(Run, run_id) is None:
                raise NotFound(f"no run {run_id!r}")
            row = put_manifest(s, run_id, {"revision": revision, "params": params, "entries": entries,
                                           "dropped": dropped})
            s.flush()
            return _record(row)

    def get_manifest(self, run_id: str) -> ManifestRecord | None:
        """The run's manifest, or None when the run has none (yet: it is written as the run ends)."""
        with self._read() as s:
            if s.get(Run, run_id) is None:
                raise NotFound(f"no run {run_id!r}")
            row = s.get(RunManifest, run_id)
            return None if row is None else _record(row)

    def recent_manifests(self, limit: int = 5000) -> list[ManifestRun]:
        """The newest manifests with their runs, newest first (a lineage filters them by table)."""
        q = (select(RunManifest, Run).join(Run, Run.id == RunManifest.run_id)
             .order_by(Run.started_at.desc(), Run.id).limit(limit))
        with self._read() as s:
            return [ManifestRun(_record(m), NotebookId(r.notebook_id), CellId(r.cell_id),
                                None if r.user_id is None else UserId(r.user_id), r.started_at, r.status)
                    for m, r in s.execute(q).all()]
