"""Run manifests on the server: what a run read and wrote, kept with the run and checked where it can be.

    GET /api/runs/<run_id>/manifest   -> {run_id, notebook_id, cell_id, status, recorded, revision,
                                          params, lock_hash, entries: [{access, format, path, table, version, …,
                                          verified, check}], dropped}
    GET /api/lineage?table=db.table   -> {table, versions: [{version, writes: [run], reads: [run]}]}

The entries are the kernel's word (console/wire/kernel.py run_manifest), and a member's cell can
write to its kernel's pipe: so the server takes them only for the run the kernel is executing,
keeps at most MAX_RUN_ENTRIES of them, and treats each path as a string to show. A delta version
is checked against the lake's own log, read by the server (console/server/lake_read.py: no link
followed), for tables the server itself finds in the lake as its listing does, by the name the entry's path spells:
a read's version must be in the log and committed before the run ended, a write's committed while
the run ran. Anything else (a plain file, a path outside the lake's tables, a version the log does
not hold) is kept as reported with `verified: false` and why.
"""
from __future__ import annotations

import logging
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import jsonify, request
from flask.typing import ResponseReturnValue

from console.server import lake_read
from console.wire.kernel import ManifestEntry, RunManifest

if TYPE_CHECKING:
    from console.server.sessions.kernel_session import QueuedRun

log = logging.getLogger(__name__)

MAX_RUN_ENTRIES = 1000  # entries one run keeps, whatever the kernel sends
CLOCK_SLACK_S = 1.0  # a commit's timestamp is its writer's clock: the kernel, on this machine (ms rounding)
LINEAGE_RUNS = 5000  # the newest manifests a lineage looks through
_LAKE_NAME = re.compile(r"^(?:([A-Za-z0-9_]+)\.)?([A-Za-z0-9_]+)$")
_LAKE_PATH = re.compile(r"^(?:lake:)?([A-Za-z0-9_]+)/([A-Za-z0-9_]+)/?$")  # relative: under the lake
_LOCK_HASH = re.compile(r"[0-9a-f]{1,64}")
_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # as the server makes them (console/ids.py); a kernel's word


def accept(run: QueuedRun, msg: RunManifest) -> None:
    """Add a manifest message's entries to the running run, within the run's cap."""
    room = max(0, MAX_RUN_ENTRIES - len(run.io))
    taken = msg.entries[:room]
    run.io.extend(_plain(e) for e in taken)
    run.io_dropped = min(2**31, run.io_dropped + msg.dropped + len(msg.entries) - len(taken))
    if msg.lock_hash and _LOCK_HASH.fullmatch(msg.lock_hash):  # a layer's hex name, nothing else
        run.lock_hash = msg.lock_hash


def _plain(e: ManifestEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"access": e.access, "format": e.format, "path": e.path, "statement": e.statement,
                           "line": e.line}
    for name in ("table", "version", "mode", "size", "files", "mtime", "digest"):
        value = getattr(e, name)
        if value not in (None, ""):
            out[name] = value
    if e.sources_dropped:
        out["sources_dropped"] = e.sources_dropped
    if e.access == "write" and e.model:
        out["model"] = True
        if _RUN_ID.fullmatch(e.trained_by):
            out["trained_by"] = e.trained_by
    if e.access == "write" and e.sources:
        out["sources"] = [{k: v for k, v in (("format", s.format), ("path", s.path), ("table", s.table),
                                             ("version", s.version), ("digest", s.digest), ("run_id", s.run_id))
                           if v not in (None, "") and (k != "run_id" or _RUN_ID.fullmatch(str(v)))}
                          for s in e.sources]
    return out


def lake_name(path: str) -> str | None:
    """db.table that a delta path spells in the lake (`t` is default.t; `db/t` and `lake:db/t` too)."""
    m = _LAKE_NAME.match(path.strip())
    if m:
        return f"{m.group(1) or 'default'}.{m.group(2)}"
    m = _LAKE_PATH.match(path.strip())
    return f"{m.group(1)}.{m.group(2)}" if m else None


def verify(lake: Path, entries: list[dict[str, Any]], since: float, until: float) -> list[dict[str, Any]]:
    """The entries, each with `verified` and `check` (why, or what was checked)."""
    listed: dict[str, lake_read.Table | None] = {}  # the lake's own tables, found as its listing finds them
    commits: dict[tuple[str, int], dict[str, Any] | None | str] = {}
    out = []
    for e in entries:
        verified, check = False, "recorded as the kernel reported it (not a delta version)"
        if str(e.get("format", "")).lower() == "delta" and e.get("version") is not None:
            verified, check = _check(lake, e, listed, commits, since, until)
        checked = {**e, "verified": verified, "check": check}
        if e.get("sources"):  # what a write came from: loads of earlier runs, so read before this one ended
            checked["sources"] = [_checked_source(lake, s, listed, commits, until) for s in e["sources"]]
        out.append(checked)
    return out


def _checked_source(lake: Path, s: dict[str, Any], listed: dict[str, lake_read.Table | None],
                    commits: dict[tuple[str, int], dict[str, Any] | None | str], until: float) -> dict[str, Any]:
    if str(s.get("format", "")).lower() != "delta" or s.get("version") is None:
        return {**s, "verified": False}
    verified, _ = _check(lake, {**s, "access": "read"}, listed, commits, 0.0, until)
    return {**s, "verified": verified}


def _check(lake: Path, e: dict[str, Any], listed: dict[str, lake_read.Table | None],
           commits: dict[tuple[str, int], dict[str, Any] | None | str], since: float,
           until: float) -> tuple[bool, str]:
    name = lake_name(str(e.get("path", "")))
    if name is not None and name not in listed:
        listed[name] = lake_read.find(lake, *name.split(".", 1))
    table = listed.get(name) if name is not None else None
    if name is None or table is None:
        return False, "not a delta table of the lake: recorded as the kernel reported it"
    if e.get("table") and e["table"] != name:
        return False, f"the entry names table {str(e['table'])[:80]!r}, but its path is {name}"
    version = int(e["version"])
    key = (name, version)
    if key not in commits:
        try:
            commits[key] = lake_read.commit(lake, table, version)
        except (lake_read.BadLog, OSError, ValueError, RecursionError) as exc:
            commits[key] = f"its log is unreadable ({str(exc)[:120]})"
    found = commits[key]
    if isinstance(found, str):
        return False, found
    if found is None:
        return False, f"the lake's log of {name} has no version {version}"
    stamp = found.get("timestamp")
    if not isinstance(stamp, int):
        return False, f"version {version} of {name} is in the log, without a commit time to check"
    at = stamp / 1000
    if e.get("access") == "write" and not since - CLOCK_SLACK_S <= at <= until + CLOCK_SLACK_S:
        return False, f"version {version} of {name} was not committed while this run ran"
    if e.get("access") == "read" and at > until + CLOCK_SLACK_S:
        return False, f"version {version} of {name} was committed after this run ended"
    return True, f"version {version} is in the lake's log of {name}"


def ended(lake: Path, run: QueuedRun) -> dict[str, Any] | None:
    """The ended run's manifest for the store (finish_run): the revision and parameters it was
    queued with and its checked entries; None when checking failed (the run's end is stored anyway)."""
    try:
        entries = verify(lake, run.io, run.queued_at, time.time())
    except Exception:  # a fault of ours: the run ends without its manifest rather than not at all
        log.exception("checking the manifest of run %s failed", run.run_id)
        return None
    return {"revision": run.revision, "params": run.params, "entries": entries, "dropped": run.io_dropped,
            "lock_hash": run.lock_hash, "replay_of": run.replay_of}


# ---------------------------------------------------------------- HTTP


def run_manifest(run_id: str) -> ResponseReturnValue:
    """The run's manifest (POLICIES: the notebook's viewers, as the run itself)."""
    from console.server.deps import get_store

    store = get_store()
    run = store.get_run(run_id)
    m = store.get_manifest(run_id)
    body: dict[str, Any] = {"run_id": run.id, "notebook_id": run.notebook_id, "cell_id": run.cell_id,
                            "status": run.status, "recorded": m is not None}
    if m is None:  # in flight (it is written as the run ends), or a run from before manifests
        body.update({"revision": None, "params": {}, "entries": [], "dropped": 0, "lock_hash": "", "replay_of": ""})
    else:
        body.update({"revision": m.revision, "params": m.params,
                     "entries": with_runs(store, run.notebook_id, m.entries), "dropped": m.dropped,
                     "lock_hash": m.lock_hash, "replay_of": m.replay_of, "recorded_at": m.created_at.isoformat()})
    return jsonify(body)


def with_runs(store: Any, notebook_id: str, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries with each run they name (a model's trainer, the run that read a source) told as the
    store holds it, when it is a run of the same notebook: a kernel serves one notebook, so any other
    id it reported is not its to name, and is left out rather than shown from another notebook."""
    from console.store import NotFound

    known: dict[str, dict[str, Any] | None] = {}

    def told(run_id: Any) -> dict[str, Any] | None:
        if not isinstance(run_id, str) or not run_id:
            return None
        if run_id not in known:
            try:
                r = store.get_run(run_id)
                known[run_id] = ({"run_id": r.id, "cell_id": r.cell_id, "user_id": r.user_id,
                                  "started_at": r.started_at.isoformat(), "status": r.status}
                                 if r.notebook_id == notebook_id else None)
            except NotFound:
                known[run_id] = None
        return known[run_id]

    out = []
    for e in entries:
        if "trained_by" not in e and not e.get("sources"):
            out.append(e)
            continue
        e = dict(e)
        trainer = told(e.pop("trained_by", None))
        if trainer is not None:
            e["trained_by"] = trainer
        if e.get("sources"):
            e["sources"] = [{**{k: v for k, v in s.items() if k != "run_id"},
                             **({"read_by": r} if (r := told(s.get("run_id"))) else {})} for s in e["sources"]]
        out.append(e)
    return out


def lineage() -> ResponseReturnValue:
    """Which runs wrote and read each version of a lake table, among the notebooks the caller may view."""
    from console.server import access, auth
    from console.server.deps import get_store
    from console.server.errors import ApiError
    from console.store import NotFound

    table = request.args.get("table", "")
    name = lake_name(table) if len(table) <= 256 else None
    if name is None:
        raise ApiError(400, f"'table' must name a delta table of the lake as db.table, not {table[:80]!r}")
    store, user = get_store(), auth.signed_in()
    may: dict[str, str | None] = {}  # notebook id -> its name when the caller may view it, else None

    def visible(notebook_id: str) -> bool:
        if notebook_id not in may:
            try:
                nb = store.get_notebook(notebook_id)
                may[notebook_id] = nb.name if access.can(user, nb, "viewer", store) else None
            except NotFound:  # a notebook deleted since (its runs go with it)
                may[notebook_id] = None
        return may[notebook_id] is not None

    versions: dict[int, dict[str, list[dict[str, Any]]]] = {}
    upstream: dict[str, set[int]] = {}  # what this table's versions were made from (name -> versions)
    downstream: dict[str, set[int]] = {}  # what was made from this table
    for mr in store.recent_manifests(LINEAGE_RUNS):
        for e in mr.manifest.entries:
            this = e.get("version") is not None and lake_name(str(e.get("path", ""))) == name
            made_from_it = e.get("access") == "write" and any(_source_name(s) == name for s in e.get("sources") or [])
            if not (this or made_from_it) or not visible(mr.notebook_id):
                continue
            if made_from_it and not this:
                _add(downstream, lake_name(str(e.get("path", ""))) or str(e.get("path", ""))[:256], e.get("version"))
            if not this:
                continue
            slot = versions.setdefault(int(e["version"]), {"writes": [], "reads": []})
            seen = {"run_id": mr.manifest.run_id, "notebook_id": mr.notebook_id, "notebook": may[mr.notebook_id],
                    "cell_id": mr.cell_id,
                    "user_id": mr.user_id, "started_at": mr.started_at.isoformat(), "status": mr.status,
                    "verified": bool(e.get("verified"))}
            if e.get("access") == "write":  # what the version was made of; a model's training run
                (told,) = with_runs(store, mr.notebook_id, [e])
                seen.update({k: told[k] for k in ("model", "trained_by", "sources", "sources_dropped") if k in told})
                for src in e.get("sources") or []:
                    _add(upstream, _source_name(src) or str(src.get("path", ""))[:256], src.get("version"))
            slot["writes" if e.get("access") == "write" else "reads"].append(seen)
    return jsonify({"table": name, "versions": [{"version": v, **versions[v]} for v in sorted(versions)],
                    "upstream": _graph(upstream), "downstream": _graph(downstream)})


def _source_name(source: dict[str, Any]) -> str | None:
    """A source's lake table (db.table), None for anything else (a file: named by its path)."""
    if str(source.get("format", "")).lower() != "delta":
        return None
    return str(source["table"]) if source.get("table") else lake_name(str(source.get("path", "")))


def _add(graph: dict[str, set[int]], node: str, version: Any) -> None:
    graph.setdefault(node, set()).update([version] if isinstance(version, int) else [])


def _graph(graph: dict[str, set[int]]) -> list[dict[str, Any]]:
    """Neighbours of a table, each with the versions that tie them (a lake table's name, or a file's path)."""
    return [{"name": node, "table": lake_name(node) == node, "versions": sorted(graph[node])} for node in sorted(graph)]
