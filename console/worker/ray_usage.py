"""What a running cell's Ray job holds: its actors, tasks and CPUs, sent to the kernel while it runs.

Ray's state API (ray.util.state) asks the dashboard, which our heads leave out, so this reads
the cluster's GCS the way the dashboard does: the actor table filtered by the cell's job
(ray._private.state, as console/kernel/sqlengines/cluster_driver.py does) and the GCS task
events through TaskInfoGcsService.GetTaskEvents with a job filter and a limit, so a busy
cluster's other jobs are never read. A Ray Client driver (ray://) has no GCS connection: it
reports the cluster's CPUs only, and says so.

UsageReporter samples every INTERVAL seconds (up to MOST when a sample is costly: SHARE) on a thread
of its own while the cell's driver is connected, and once more when the cell ends (before its
CellDone), over the worker's channel (console/wire/worker.py CellRayUsage). A sample that fails
is skipped, never the cell's error. That last sample waits up to SETTLE seconds for the tasks the
cell already has the results of to show as finished (each worker tells the GCS about its tasks
about once a second).
"""
from __future__ import annotations

import importlib
import sys
import threading
import time
from collections import Counter
from typing import Any, cast

from console.wire.worker import LISTED, ActorState, CellRayUsage, RayActor, RayTask, RayUsage, TaskState

INTERVAL = 1.5  # seconds between reports while the cell runs
# At most ~5% of the driver's time: reading 2000 task events takes ~90 ms of CPU here (protobuf
# parsing holds the GIL), so a costly sample stretches the wait before the next one to 20 times
# the CPU it took. CPU, not wall time: a sample mostly waits on the GCS's answers, which on a busy
# machine take seconds while costing the driver nothing, and 20 times that wait outlasted whole
# cells (a fresh-clone run: a 39 s cell's first sample put the next one after its end, so its
# page never showed the actors live).
SHARE = 20
MOST = 6.0  # seconds: never longer between reports while the cell runs, whatever a sample cost
TASK_LIMIT = 2000  # task events the GCS returns per sample; past it the counts say "at least"
RPC_TIMEOUT = 2.0
# The cell's last report is what its page keeps. A Ray worker sends its task events to the GCS
# about once a second (task_events_report_interval_ms), so when `ray.get` returns the GCS may
# still say "running" for the very tasks whose results the cell holds (a fresh-clone run: the last
# report said 0 finished of 5). The last sample is read again every SETTLE_STEP while any task is
# running or pending, for at most SETTLE s; a cell that leaves tasks running on purpose ends at
# most that much later. stop()'s 3 s bound still caps the whole.
SETTLE = 2.0
SETTLE_STEP = 0.5
_ACTOR_STATES = {"ALIVE": "alive", "DEPENDENCIES_UNREADY": "pending", "PENDING_CREATION": "pending",
                 "RESTARTING": "restarting", "DEAD": "dead"}
_RUNNING = {"RUNNING", "RUNNING_IN_RAY_GET", "RUNNING_IN_RAY_WAIT", "SUBMITTED_TO_WORKER", "GETTING_AND_PINNING_ARGS"}
_ORDER = {"alive": 0, "restarting": 1, "pending": 2, "dead": 3, "running": 0, "failed": 2, "finished": 3}


def _connected_driver() -> Any:
    """The ray module when this process is a connected (non-client) driver, else None."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    return ray


def _cpus(resources: Any) -> float:
    try:
        return max(0.0, float(dict(resources).get("CPU", 0.0)))
    except (TypeError, ValueError):
        return 0.0


def _generated(name: str) -> Any:
    """One of Ray's protobuf modules (untyped: their classes are made at import)."""
    return importlib.import_module(f"ray.core.generated.{name}")


def _label(text: Any) -> str:
    return str(text)[:200]


class _Gcs:
    """The job's view of the GCS: node addresses, the actor table, the task events."""

    def __init__(self, ray: Any) -> None:
        self.ray = ray
        self.job_hex = ray.get_runtime_context().get_job_id()
        self._stub: Any = None

    def node_addresses(self) -> dict[str, str]:
        return {n["NodeID"]: n.get("NodeManagerAddress", "") for n in self.ray.nodes()}

    def actors(self, nodes: dict[str, str]) -> list[tuple[str, str, str, float]]:
        """(class, state, node address, CPUs) of every actor of the job."""
        from ray._private import state

        gcs_pb2 = _generated("gcs_pb2")
        accessor = state.state._connect_and_get_accessor()
        out = []
        for raw in accessor.get_actor_table(self.ray.JobID.from_hex(self.job_hex), None):
            data = gcs_pb2.ActorTableData.FromString(raw)
            kind = _ACTOR_STATES.get(gcs_pb2.ActorTableData.ActorState.Name(data.state), "pending")
            node = nodes.get(data.address.node_id.hex(), "") if kind != "pending" else ""
            out.append((_label(data.class_name), kind, node, _cpus(data.required_resources)))
        return out

    def tasks(self, nodes: dict[str, str]) -> tuple[list[tuple[str, str, str, float]], bool]:
        """(name, state, node, CPUs) of the job's tasks (actor creations left out), and whether cut."""
        from ray._private.grpc_utils import init_grpc_channel

        common_pb2, gcs_service_pb2 = _generated("common_pb2"), _generated("gcs_service_pb2")
        if self._stub is None:
            worker: Any = importlib.import_module("ray._private.worker").global_worker
            channel = init_grpc_channel(worker.gcs_client.address)
            gcs_service_pb2_grpc = _generated("gcs_service_pb2_grpc")
            self._stub = gcs_service_pb2_grpc.TaskInfoGcsServiceStub(channel)
        request = gcs_service_pb2.GetTaskEventsRequest(limit=TASK_LIMIT)
        job = request.filters.job_filters.add()
        job.job_id = bytes.fromhex(self.job_hex)
        request.filters.exclude_driver = True
        reply = self._stub.GetTaskEvents(request, timeout=RPC_TIMEOUT)
        latest: dict[tuple[bytes, int], tuple[int, Any]] = {}
        for event in reply.events_by_task:
            if event.task_info.type == common_pb2.TaskType.Value("ACTOR_CREATION_TASK"):
                continue  # an actor, counted as one
            key = (event.task_id, event.attempt_number)
            stamps = event.state_updates.state_ts_ns
            status = max(stamps.items(), key=lambda kv: kv[1])[0] if stamps else 0
            at = stamps.get(status, 0)
            if key not in latest or at >= latest[key][0]:
                latest[key] = (at, event)
        out = []
        for _, event in latest.values():
            stamps = event.state_updates.state_ts_ns
            name = common_pb2.TaskStatus.Name(max(stamps.items(), key=lambda kv: kv[1])[0]) if stamps else "NIL"
            state = ("finished" if name == "FINISHED" else "failed" if name == "FAILED"
                     else "running" if name in _RUNNING else "pending")
            node = nodes.get(event.state_updates.node_id.hex(), "") if state != "pending" else ""
            out.append((_label(event.task_info.name or event.task_info.func_or_class_name),
                        state, node, _cpus(event.task_info.required_resources)))
        return out, bool(reply.num_truncated)


def sample(gcs: _Gcs | None) -> RayUsage | None:
    """The job's usage now, or None when this process is not a Ray driver."""
    ray = _connected_driver()
    if ray is None:
        return None
    total = _cpus(ray.cluster_resources())
    used = max(0.0, total - _cpus(ray.available_resources()))
    if gcs is None:
        return RayUsage(cluster_cpus=total, cluster_cpus_used=round(used, 3),
                        note="a Ray Client driver: the job's actors and tasks are not visible from here")
    nodes = gcs.node_addresses()
    actors = gcs.actors(nodes)
    counts = Counter(state for _, state, _, _ in actors)
    cpus = sum(c for _, state, _, c in actors if state == "alive")
    note = ""
    try:
        tasks, cut = gcs.tasks(nodes)
    except Exception as exc:  # task events are off on this cluster, or the GCS did not answer in time
        tasks, cut = None, False
        note = f"tasks are not visible without Ray's dashboard here ({type(exc).__name__})"
    task_counts = Counter(state for _, state, _, _ in tasks or [])
    cpus += sum(c for _, state, _, c in tasks or [] if state == "running")
    if cut:
        note = f"more than {TASK_LIMIT} tasks: the task counts are of the latest {TASK_LIMIT}"
    listed = sorted(actors, key=lambda a: (_ORDER[a[1]], a[0]))[:LISTED]
    return RayUsage(
        actors_alive=counts["alive"], actors_pending=counts["pending"] + counts["restarting"],
        actors_dead=counts["dead"], actors=[RayActor(n, cast(ActorState, s), node, c) for n, s, node, c in listed],
        tasks_running=None if tasks is None else task_counts["running"],
        tasks_pending=None if tasks is None else task_counts["pending"],
        tasks_finished=None if tasks is None else task_counts["finished"],
        tasks_failed=None if tasks is None else task_counts["failed"],
        tasks=_task_groups(tasks or []), cpus_in_use=round(cpus, 3), cluster_cpus=total,
        cluster_cpus_used=round(used, 3),
        nodes=sorted({n for _, s, n, _ in actors if n and s == "alive"}
                     | {n for _, s, n, _ in tasks or [] if n and s == "running"})[:LISTED],
        note=note)


def _task_groups(tasks: list[tuple[str, str, str, float]]) -> list[RayTask]:
    """Tasks by (name, state): one row each, with its node when they all ran on one."""
    groups: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for name, state, node, cpus in tasks:
        groups.setdefault((name, state), []).append((node, cpus))
    rows = []
    for (name, state), items in groups.items():
        nodes = {n for n, _ in items}
        rows.append(RayTask(name, cast(TaskState, state), len(items), nodes.pop() if len(nodes) == 1 else "",
                            items[0][1]))
    rows.sort(key=lambda t: (_ORDER[t.state], -t.count, t.name))
    return rows[:LISTED]


def _unsettled(usage: RayUsage) -> bool:
    return bool(usage.tasks_running or usage.tasks_pending)


class UsageReporter:
    """Reports the cell's Ray usage over `send` every INTERVAL s, and once at stop(); one per cell."""

    def __init__(self, send: Any, job_id: str, interval: float = INTERVAL, *, read: Any = None,
                 cpu_clock: Any = time.thread_time, stop: Any = None, pause: Any = time.sleep) -> None:
        """`read` (the usage now; sample() of this driver's GCS by default), `cpu_clock` (this thread's
        CPU seconds), `stop` (an Event: its wait() is the time between samples) and `pause` (the
        wait between the last report's reads, once stopped) are for tests to move time instead of
        waiting."""
        self.send = send
        self.job_id = job_id
        self.interval = interval
        self._read = read or (lambda: sample(self._view()))
        self._cpu_clock = cpu_clock
        self._stop = stop or threading.Event()
        self._pause = pause
        self._gcs: _Gcs | None = None
        self._gcs_job = ""
        self._thread = threading.Thread(target=self._loop, name="ray-usage", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        wait = self.interval
        while not self._stop.wait(wait):
            began = self._cpu_clock()
            self.report()
            wait = min(MOST, max(self.interval, SHARE * (self._cpu_clock() - began)))
        self.report_last()  # the cell's end: its actors are still up (the job ends after CellDone)

    def report(self) -> None:
        usage = self._sample()
        if usage is not None:
            self.send(CellRayUsage(job_id=self.job_id, usage=usage))

    def report_last(self) -> None:
        """The cell's end: read again while its tasks show as running or pending, for at most SETTLE s."""
        usage = self._sample()
        waited = 0.0
        while usage is not None and _unsettled(usage) and waited < SETTLE:
            self._pause(SETTLE_STEP)
            waited += SETTLE_STEP
            usage = self._sample() or usage
        if usage is not None:
            self.send(CellRayUsage(job_id=self.job_id, usage=usage))

    def _sample(self) -> RayUsage | None:
        try:
            return cast("RayUsage | None", self._read())
        except Exception:  # a Ray that went away mid-sample: the next one may work
            return None

    def _view(self) -> _Gcs | None:
        ray = _connected_driver()
        if ray is None:
            return None
        from ray.util.client import ray as client_ray

        if client_ray.is_connected():
            return None
        job = ray.get_runtime_context().get_job_id()
        if self._gcs is None or self._gcs_job != job:  # the cell may have shut Ray down and connected again
            self._gcs, self._gcs_job = _Gcs(ray), job
        return self._gcs

    def stop(self, timeout: float = 3.0) -> None:
        """Send the last report and end; a GCS that does not answer delays the cell's end at most `timeout`."""
        self._stop.set()
        self._thread.join(timeout)
