"""The Daft driver on the session's Ray cluster: a child process of the kernel (cluster.py).

It speaks the Daft driver vocabulary (console/wire/daft.py) over one Channel on its stdin/stdout
(everything Ray and Daft print goes to stderr, never into the protocol). First `daft_connect`: it
connects (`ray.init`, then Daft's Ray runner, once) and answers with the cluster's CPU nodes. Then
one `daft_query` per statement, answered once Daft's workers have written the result as parquet
files into its `out_dir` (on the nodes where its partitions are: the rows never come through this
process), the files in the result's row order, or with the error (daft_run.py). Being a process
of its own, it is the unit of cancellation: the kernel kills it (its Ray job, so the Flotilla
runner and the Swordfish actors of the query, go with it) on an interrupt or a timeout, and starts
another for the next cluster statement. What it wrote stays: the files, not this process, hold a
result.
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Any

from console.kernel.sqlengines.daft_run import message
from console.wire.channel import TRUSTED_LINE_CAP, Channel, ProtocolError
from console.wire.daft import TO_DRIVER, DriverAnswer, DriverConnect, DriverQuery
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
    def daft_runner() -> None:
        import daft

        daft.set_runner_ray(noop_if_initialized=True)  # reuses the connection above: never a second local Ray

    init_ray(address, then=daft_runner, runtime_env={"env_vars": dict(DAFT_ENV)}, logging_level=logging.WARNING,
             log_to_driver=False)


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


def answer_of(request_id: str, reply: dict[str, Any]) -> DriverAnswer:
    """run()'s reply as the typed answer (its keys are DriverAnswer's fields)."""
    fields = ("error", "cannot_run", "nodes", "files", "partitions", "worker_nodes", "daft_actors")
    return DriverAnswer(request_id, **{k: reply[k] for k in fields if k in reply})


def serve(channel: Channel) -> None:
    """Answer the kernel until it closes the pipe: a connect first, then statements."""
    connected = False
    for msg in channel.messages():
        if isinstance(msg, DriverConnect):
            try:
                import daft  # noqa: F401
            except ImportError as exc:
                channel.send(DriverAnswer(msg.request_id, error=f"SQL on the cluster needs daft ({exc}): pip install "
                                          "--no-deps daft==0.7.26 tqdm==4.67.3 (docs/cluster-sql.md)"))
                return
            try:
                connect(msg.address)
                connected = True
                channel.send(DriverAnswer(msg.request_id, nodes=cpu_nodes()))
            except Exception as exc:
                why = f"cannot connect to the Ray cluster at {msg.address}: {exc}"
                channel.send(DriverAnswer(msg.request_id, error=why))
                return
        elif isinstance(msg, DriverQuery):
            if not connected:
                channel.send(DriverAnswer(msg.request_id, error="the driver is not connected to a cluster"))
                continue
            try:
                reply = run(msg.request())
            except Exception as exc:
                reply = {"error": message(exc)}
            channel.send(answer_of(msg.request_id, reply))


def main() -> None:
    out = os.dup(1)
    os.dup2(2, 1)  # Ray's and Daft's prints go to stderr, never into the protocol
    sys.stdout = sys.stderr
    os.environ.update(DAFT_ENV)
    # The kernel started this process with what it sends: the trusted cap (a statement's SQL).
    channel = Channel(TO_DRIVER, read=0, write=out, line_cap=TRUSTED_LINE_CAP, name="kernel->daft driver")
    try:
        serve(channel)
    except ProtocolError as exc:
        print(f"the kernel broke the driver's protocol: {exc}", file=sys.stderr)
        sys.exit(2)
    finally:
        channel.close()


if __name__ == "__main__":
    main()
