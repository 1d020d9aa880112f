"""The Daft driver on the session's Ray cluster: a child process of the kernel (cluster.py).

One JSON line in, one JSON line out, on stdin/stdout (everything Ray and Daft print goes to
stderr). First line: {"address": …}; it connects (`ray.init`, then Daft's Ray runner, once) and
answers {"ready": true, "nodes": N}. Then per statement:
    {"sql": daft_sql, "tables": {name: {"files": [...]} | {"groups": [{"values": {column: value},
     "files": [...]}, …], "columns": [...], "types": {column: arrow type}} | {"ipc": path}}, "out_dir": folder,
     "delta": bool, "partition_by": [column, …], "functions": {name: spec}, "values": {name: DuckDB SQL}}
and it answers {"files": [...], "partitions": [{column: value text}, …], "nodes": N} once Daft's
workers have written the result as parquet files into `out_dir` (on the nodes where its
partitions are: the rows never come through this process), the files in the result's row order,
or {"error": text}, with "cannot_run": true when Daft refused or failed the statement
(daft_run.py). "functions": what DuckDB computes inside Daft (daft_udf.py), "values": the
statement's VALUES. "delta": timestamps are written in microseconds, the only unit a Delta table
holds. "partition_by": hive folders per value, each file's values in "partitions". Being a process of its own, it is the
unit of cancellation: the kernel kills it (its Ray job, so the Flotilla runner and the Swordfish
actors of the query, go with it) on an interrupt or a timeout, and starts another for the next
cluster statement. What it wrote stays: the files, not this process, hold a result.
"""
from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

from console.kernel.sqlengines.daft_run import message
from console.worker.ray_connect import init_ray

# Off before daft is imported: Scarf telemetry (on by default) and the progress bars; the actors
# get the same through the job's runtime_env.
DAFT_ENV = {"DAFT_ANALYTICS_ENABLED": "0", "DO_NOT_TRACK": "true", "DAFT_PROGRESS_BAR": "0",
            "SCARF_NO_ANALYTICS": "true"}


def cpu_nodes() -> int:
    import ray

    return sum(1 for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0)


def worker_nodes() -> list[str]:
    """The nodes where this job's Daft workers (one Swordfish actor per node) run, for tests and logs.

    From the GCS actor table: Ray's state API needs the dashboard, which our heads leave out.
    """
    import ray
    from ray._private import state

    try:
        table = state.actors(job_id=ray.get_runtime_context().job_id, actor_state_name="ALIVE")
    except Exception:
        return []
    return sorted({a["Address"]["NodeID"] for a in table.values() if a.get("ActorClassName") == "RaySwordfishActor"})


def daft_actors() -> dict[str, int]:
    """Live Daft actors on the whole cluster per Ray job (hex id): a cancelled query's job has none left."""
    from ray._private import state

    counts: dict[str, int] = {}
    try:
        table = state.actors(actor_state_name="ALIVE")
    except Exception:
        return counts
    for actor in table.values():
        if actor.get("ActorClassName") in ("RaySwordfishActor", "RemoteFlotillaRunner"):
            counts[str(actor.get("JobID"))] = counts.get(str(actor.get("JobID")), 0) + 1
    return counts


def connect(address: str) -> None:
    init_ray(address, runtime_env={"env_vars": dict(DAFT_ENV)}, logging_level=logging.WARNING, log_to_driver=False)
    import daft

    daft.set_runner_ray(noop_if_initialized=True)  # reuses the connection above: never a second local Ray


# How long a sort waits for a free CPU before it fails (see run()).
CPU_WAIT_SECONDS = 10.0


def wait_for_cpu() -> str | None:
    """Daft's sort samples its boundaries in a task that needs one free CPU: with every CPU held by
    other jobs (training actors) the query would hang. Wait a little for one, then say why."""
    import time

    import ray

    deadline = time.monotonic() + CPU_WAIT_SECONDS
    while ray.available_resources().get("CPU", 0) < 1:
        if time.monotonic() > deadline:
            total = ray.cluster_resources().get("CPU", 0)
            return (f"the cluster has no free CPU (other jobs hold all {total:g}) and this select sorts, "
                    "which needs one: run it when they finish, or locally with "
                    'set sql.engine = "local" where type="conf";')
        time.sleep(0.2)
    return None


def run(request: dict[str, Any]) -> dict[str, Any]:
    """The statement's answer (daft_run.py), with where its workers ran."""
    from console.kernel.sqlengines.daft_run import answer

    if request.get("needs_cpu"):
        busy = wait_for_cpu()
        if busy:
            return {"error": busy, "nodes": cpu_nodes()}
    reply = answer(request)
    if "error" in reply:
        return reply
    return {**reply, "nodes": cpu_nodes(), "worker_nodes": worker_nodes(), "daft_actors": daft_actors()}


def main() -> None:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # Ray's and Daft's prints go to stderr, never into the protocol
    sys.stdout = sys.stderr
    os.environ.update(DAFT_ENV)
    first = json.loads(sys.stdin.readline())
    try:
        import daft  # noqa: F401
    except ImportError as exc:
        out.write(json.dumps({"error": f"SQL on the cluster needs daft ({exc}): pip install --no-deps "
                                       "daft==0.7.26 tqdm==4.67.3 (docs/cluster-sql.md)"}) + "\n")
        return
    try:
        connect(first["address"])
        out.write(json.dumps({"ready": True, "nodes": cpu_nodes()}) + "\n")
    except Exception as exc:
        out.write(json.dumps({"error": f"cannot connect to the Ray cluster at {first['address']}: {exc}"}) + "\n")
        return
    for line in sys.stdin:
        try:
            reply = run(json.loads(line))
        except Exception as exc:
            reply = {"error": message(exc)}
        out.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
