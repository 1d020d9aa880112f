"""Running sessions: the kernels a user may see, what they hold, and Shut down.

    GET  /running                          -> the Running page (frontend/src/sessions.js)
    GET  /api/sessions                     -> {sessions: [...]} the caller may see, oldest first
    POST /api/sessions/<notebook_id>/stop  -> {stopped: bool}  (body {} or none)

A session is listed to an admin always, to anyone else when they may run its notebook (runner and
above): a notebook's session is shared by its runners (console/server/sessions/kernels.py). Stopping one
is the notebook owner's (admins own everything): the policy table's `member notebook:owner`.
Memory and CPU are the session's cgroup's (kernel, Python worker and their children together);
`ray` is the last Ray usage a cell of the session reported (server/sessions/ray_usage.py): its job's
actors, tasks and CPUs in use, while that cell ran or when it ended. `cluster` says where its Ray
work runs and who else's runs there (docs/security.md): its own head (with that head's memory),
the data dir's shared head, a team's cluster of CONSOLE_RAY_CLUSTER_MAP, or CONSOLE_RAY_ADDRESS;
the addresses only to admins.
"""
from __future__ import annotations

import os
import time
from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from console.cluster.procs import all_stat_fields
from console.ids import NotebookId, UserId
from console.roles import at_least
from console.server import auth
from console.server.sessions import ray_usage
from console.server.deps import get_manager, get_store
from console.server.errors import ApiError
from console.server.sessions.kernels import SessionManager
from console.server.validate import json_body

SEE_ROLE = "runner"    # who may see a session: who could run cells in it
STOP_ROLE = "owner"    # who may shut it down (also the policy row of `stop`)


def decode_stop(body: dict[str, Any]) -> None:
    """The stop request's body: nothing, or an empty object; anything else says what is wrong."""
    if body:
        raise ApiError(400, f"stopping a session takes no parameters, not {', '.join(sorted(body))}")


def _usage(kernel: Any) -> tuple[int | None, float | None]:
    """(memory bytes, CPU seconds) of a kernel session, from its cgroup when it has one."""
    pid = kernel.pid
    wall = getattr(kernel, "wall", None)
    group = wall.cgroup if wall is not None else None
    memory = group.memory_usage() if group is not None else None
    cpu = group.cpu_seconds() if group is not None else None
    if pid and (memory is None or cpu is None):  # no cgroup (or v1's CPU): the kernel's process tree
        tree_memory, tree_cpu = _tree_usage(pid)
        memory = tree_memory if memory is None else memory
        cpu = tree_cpu if cpu is None else cpu
    return memory, cpu


def _tree_usage(root: int) -> tuple[int | None, float | None]:
    """Resident bytes and CPU seconds of `root` and its descendants (the launcher, kernel, worker)."""
    stats = all_stat_fields()
    if root not in stats:
        return None, None
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    todo, rss, ticks = [root], 0, 0
    while todo:
        pid = todo.pop()
        fields = stats[pid]
        ticks += int(fields[11]) + int(fields[12])  # utime + stime
        rss += int(fields[21])  # pages
        todo += children.get(pid, [])
    return rss * os.sysconf("SC_PAGE_SIZE"), ticks / os.sysconf("SC_CLK_TCK")


def cluster_of(kernel: Any, manager: Any, admin: bool) -> dict[str, Any]:
    """Where a kernel's Ray work runs, and whether that is shared (the Running page's Cluster column)."""
    own = getattr(kernel, "cluster", None)
    if own is not None:
        group = own.cgroup
        memory = group.memory_usage() if group is not None else None
        if group is not None and memory is None:  # charged to the session's memory (cgroup v1)
            memory = group.resident_bytes()
        return {"kind": "own", "shared": False, "up": own.running(), "memory_bytes": memory}
    address = kernel.cfg.get("RAY_ADDRESS")
    if not address:
        return {"kind": "shared", "shared": True}
    mapped = manager.ray_map
    team = next((c for c in mapped.clusters.values() if c.address == address), None) if mapped is not None else None
    entry: dict[str, Any] = {"kind": "team" if team is not None else "external", "shared": True,
                             "name": team.name if team is not None else None}
    if admin:
        entry["address"] = address
    return entry


def describe(session: Any, user: Any, store: Any, manager: Any) -> dict[str, Any] | None:
    """One listed session, or None when `user` may not see it (or it has no kernel)."""
    from console.server.access import role_of
    from console.store import NotFound

    kernel = session.kernel
    if kernel is None or not kernel.alive():
        return None
    try:
        info = store.get_notebook_info(session.notebook_id)
    except NotFound:
        return None
    role = role_of(store, user, info)
    if not at_least(role, SEE_ROLE):
        return None
    memory, cpu = _usage(kernel)
    now, mono = time.time(), time.monotonic()
    with session.lock:
        running = session.current
        runners = sorted(session.runners.items(), key=lambda kv: kv[1], reverse=True)
        queued = len(session.queue)
        ray = ray_usage.summary(session)
    return {
        "session_id": session.session_id,
        "notebook_id": session.notebook_id,
        "notebook": info.name,
        "job": session.lane or None,  # a job's own session (its run ends it)
        "status": session.status,
        "started_by": {"id": session.started_by, "name": manager.user_name(session.started_by)},
        "started_at": session.started_at,
        "idle_seconds": None if session.busy() else round(max(0.0, mono - session.last_active), 1),
        "runners": [{"id": uid, "name": manager.user_name(uid), "last_run_at": at} for uid, at in runners],
        "running_cell": running.cell_id if running else None,
        "running_by": manager.user_name(running.user_id) if running else None,
        "queued": queued,
        "memory_bytes": memory,
        "cpu_seconds": cpu,  # no host pid: nothing of the machine's process table reaches a member
        "ray": ray,  # the last Ray usage its cells reported (None: no Ray cell ran in this kernel)
        "cluster": cluster_of(kernel, manager, user.site_role == "admin"),
        "can_stop": not session.lane and at_least(role, STOP_ROLE),
        "now": now,
    }


def _manager() -> SessionManager:
    manager = get_manager()
    assert isinstance(manager, SessionManager)  # the listing reads the manager's own sessions
    return manager


def list_sessions() -> ResponseReturnValue:
    user, store, manager = auth.signed_in(), get_store(), _manager()
    rows = [d for s in manager.all_sessions() if (d := describe(s, user, store, manager)) is not None]
    rows.sort(key=lambda d: d["started_at"])
    return jsonify({"sessions": rows})


def stop(notebook_id: str) -> ResponseReturnValue:
    decode_stop(json_body(required=False))
    manager = _manager()
    session = manager.session(None, NotebookId(notebook_id))  # the notebook's shared session
    return jsonify({"stopped": manager.shut_down(session, UserId(auth.signed_in().id))})


def running_page() -> ResponseReturnValue:
    from console.server.pages import index

    return index()


def create_blueprint() -> Blueprint:
    bp = Blueprint("sessions", __name__)
    bp.add_url_rule("/running", "page", running_page, methods=["GET"])
    bp.add_url_rule("/api/sessions", "list", list_sessions, methods=["GET"])
    bp.add_url_rule("/api/sessions/<notebook_id>/stop", "stop", stop, methods=["POST"])
    return bp
