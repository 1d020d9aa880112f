"""A running cell's Ray usage as the server takes it from a kernel: checked, kept once, shown live.

The kernel relays its worker's reports (console/wire/kernel.py RunRayUsage; the worker reads the
GCS, console/worker/ray_usage.py). A kernel runs a member's code, so a report is untrusted:
the decoder has already bounded its lists and strings (RayUsage's annotations; past them the
kernel broke the protocol and is stopped); here it is taken only for the kernel's current run,
at most one per MIN_INTERVAL (a flood is dropped, not broadcast), and its CPU figures must be
plausible numbers. Nothing is stored: the session keeps the last report for the Running page
(console/server/api/running.py) and for a viewer who joins while the cell runs (replayed), and the
notebook's room gets it as a ray_usage event.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from console.ids import CellId, RunId
from console.wire.browser import RayUsageEvent
from console.wire.kernel import RunRayUsage
from console.wire.worker import RayUsage

MIN_INTERVAL = 0.25  # seconds between two reports taken from one session (the worker sends every 1.5 s)
MAX_CPUS = 1_000_000.0  # more CPUs than any cluster has: a report claiming so is made up


class Refused(ValueError):
    """The report is not one to take: about another run, or with figures no cluster has."""


@dataclass(frozen=True)
class LastUsage:
    """The last report a session took: of which run and cell, and when (wall and monotonic clock)."""

    run_id: RunId
    cell_id: CellId
    usage: RayUsage
    at: float
    mono: float


def check(usage: RayUsage) -> RayUsage:
    """`usage` when its CPU figures are plausible; Refused says which is not."""
    figures = {"cpus_in_use": usage.cpus_in_use, "cluster_cpus": usage.cluster_cpus,
               "cluster_cpus_used": usage.cluster_cpus_used}
    figures.update({f"actors[{i}].cpus": a.cpus for i, a in enumerate(usage.actors)})
    figures.update({f"tasks[{i}].cpus": t.cpus for i, t in enumerate(usage.tasks)})
    for name, value in figures.items():
        if not 0.0 <= value <= MAX_CPUS:
            raise Refused(f"{name} = {value!r} is not a CPU count")
    return usage


def accept(session: Any, msg: RunRayUsage) -> RayUsageEvent | None:
    """The event for the notebook's room, or None when it comes too soon after the last (session.lock held).

    Refused when the report is not about the session's current run or its figures are made up.
    """
    run = session.current
    if run is None or msg.run_id != run.run_id:
        raise Refused("a report about a run the kernel is not executing")
    usage = check(msg.usage)
    now, mono = time.time(), time.monotonic()
    last: LastUsage | None = session.ray_usage
    if last is not None and last.run_id == run.run_id and mono - last.mono < MIN_INTERVAL:
        return None
    session.ray_usage = LastUsage(run.run_id, run.cell_id, usage, now, mono)
    return RayUsageEvent(session.notebook_id, run.cell_id, run.run_id, usage, at=now)


def replayed(session: Any) -> RayUsageEvent | None:
    """The running cell's last report, for a viewer who joins while it runs (after its running
    status in the replay); None when no cell runs or it made none. Read without session.lock:
    the caller holds the notebook's lock, which the kernel's reader takes inside session.lock."""
    last: LastUsage | None = session.ray_usage
    current = session.current
    if last is None or current is None or last.run_id != current.run_id:
        return None
    return RayUsageEvent(session.notebook_id, last.cell_id, last.run_id, last.usage, at=last.at)


def summary(session: Any) -> dict[str, Any] | None:
    """The Running page's figures: the last report of the session's kernel, or None when it made none."""
    last: LastUsage | None = session.ray_usage
    if last is None:
        return None
    u = last.usage
    current = session.current
    return {
        "running": current is not None and current.run_id == last.run_id,  # else: when its last Ray cell ended
        "cell_id": last.cell_id,
        "at": last.at,
        "actors_alive": u.actors_alive, "actors_pending": u.actors_pending, "actors_dead": u.actors_dead,
        "tasks_running": u.tasks_running, "tasks_pending": u.tasks_pending, "tasks_finished": u.tasks_finished,
        "cpus_in_use": u.cpus_in_use, "cluster_cpus": u.cluster_cpus, "cluster_cpus_used": u.cluster_cpus_used,
        "actors": [{"class_name": a.class_name, "state": a.state} for a in u.actors[:5]],
    }
