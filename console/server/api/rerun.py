"""Re-run as recorded (issue 32 item 2): `POST /api/runs/<run_id>/replay` {force?}.

The recorded run's cell, as it was at the revision its manifest names, runs again in the notebook's
session with the recorded parameters, and reads what the recorded run read: each delta table of the
lake it read at the version it read (time travel), each plain file compared with the facts recorded
for it (a changed file fails the replay, naming what changed, unless `force`). The kernel does the
reading and the comparing (console/kernel/replay.py): the server never opens a path a kernel
reported. Only verified delta versions are pinned (checked against the lake's own log when the
recorded run ended); an unverified one is read as the table is now.

The replay is a new run of the cell, with its own manifest; compare the two with
`GET /api/runs/<replay>/diff/<recorded>` (console/server/api/run_diff.py); its manifest names the run it
replayed (`replay_of`). It runs in the session's environment as it is: when that is not the recorded
lock (a `%pip install` since), the replay fails saying so, unless `force` (the kernel compares).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from flask import jsonify
from flask.typing import ResponseReturnValue

from console.ids import CellId, NotebookId, UserId
from console.lang import params as notebook_params
from console.server import auth
from console.server.deps import get_manager, get_store
from console.server.errors import ApiError
from console.server.validate import body_as, typed_body
from console.store import NotFound
from console.store.manifests import ManifestRecord
from console.store.records import RunRecord
from console.wire.kernel import MANIFEST_ENTRIES, ManifestEntry, ReplayInputs


_LOCK = re.compile(r"[0-9a-f]{0,64}")  # as manifests.accept keeps it: "" is the base environment


@typed_body("POST /api/runs/<run_id>/replay")
@dataclass
class Replay:
    force: bool = False  # run even when a plain file it read, or the environment, changed since


@dataclass(frozen=True)
class Recorded:
    """What a replay of a stored run needs: the run, its manifest, the cells of the revision it ran
    (the run's own cell last: `cells[index]`) and the inputs to read as it read them."""

    run: RunRecord
    manifest: ManifestRecord
    cells: list[dict[str, Any]]
    index: int
    inputs: ReplayInputs


class NotReplayable(Exception):
    """Why a run cannot be replayed (no manifest, its revision or cell gone)."""


def recorded(store: Any, run_id: str, force: bool = False) -> Recorded:
    """The stored run `run_id` as a replay reads it (NotFound: no such run; NotReplayable: why not).
    The server's replay and `mlsql-console replay` both start here."""
    run = store.get_run(run_id)
    m = store.get_manifest(run_id)
    if m is None or m.revision is None:
        raise NotReplayable("this run has no recorded manifest (it is still running, or it ran before runs were "
                            "recorded): there is nothing to replay it from")
    try:
        snapshot = store.get_revision(run.notebook_id, m.revision).snapshot
    except NotFound:
        raise NotReplayable(f"revision {m.revision} of the notebook, which this run ran, is no longer in its "
                            "history") from None
    cells = list(snapshot.get("cells", []))
    index = next((i for i, c in enumerate(cells) if c.get("id") == run.cell_id), -1)
    if index < 0 or cells[index].get("kind") not in ("mlsql", "python"):
        raise NotReplayable(f"cell {run.cell_id} is not in revision {m.revision} as a code cell")
    inputs = ReplayInputs(pins=_pins(m.entries), files=_files(m.entries), force=force,
                          lock_hash=m.lock_hash if _LOCK.fullmatch(m.lock_hash) else "")
    return Recorded(run, m, cells, index, inputs)


def replay(run_id: str) -> ResponseReturnValue:
    spec = body_as(Replay, required=False)
    try:
        r = recorded(get_store(), run_id, spec.force)
    except NotReplayable as exc:
        raise ApiError(409, str(exc)) from None
    run, m, cell, inputs = r.run, r.manifest, r.cells[r.index], r.inputs
    source = notebook_params.apply(str(cell["kind"]), str(cell.get("source", "")), m.params)
    (new_id,) = get_manager().queue_cells(UserId(auth.signed_in().id), NotebookId(run.notebook_id),
                                          [(CellId(run.cell_id), source, str(cell["kind"]))],
                                          params=m.params, revision=m.revision, replay=inputs, replay_of=run.id)
    return jsonify({"run_id": new_id, "replay_of": run.id, "revision": m.revision, "params": m.params,
                    "pinned": inputs.pins, "checked_files": [f.path for f in inputs.files]}), 202


def _pins(entries: list[dict[str, object]]) -> dict[str, int]:
    """db.table -> version of each delta table the run read, where the lake's log confirmed it."""
    pins: dict[str, int] = {}
    for e in entries:
        table, version = e.get("table"), e.get("version")
        if e.get("access") == "read" and e.get("verified") and isinstance(table, str) and table \
                and isinstance(version, int) and version >= 0:
            pins.setdefault(table, version)  # the first read of a table in the cell is the one to pin
    return dict(list(pins.items())[:MANIFEST_ENTRIES])


def _files(entries: list[dict[str, object]]) -> list[ManifestEntry]:
    """The plain files the run read with the facts recorded for them."""
    out = []
    for e in entries:
        if e.get("access") != "read" or e.get("version") is not None or not e.get("digest"):
            continue
        out.append(ManifestEntry("read", str(e.get("format", ""))[:64], str(e.get("path", ""))[:4096],
                                 size=_count(e.get("size")), files=_count(e.get("files")),
                                 digest=str(e.get("digest"))[:80]))
    return out[:MANIFEST_ENTRIES]


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and 0 <= value < 2**62 else None


__all__ = ["NotReplayable", "Recorded", "recorded", "replay"]
