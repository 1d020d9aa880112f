"""The Daft driver on the session's Ray cluster: a child process of the kernel (cluster.py).

One JSON line in, one JSON line out, on stdin/stdout (everything Ray and Daft print goes to
stderr). First line: {"address": …}; it connects (`ray.init`, then Daft's Ray runner, once) and
answers {"ready": true, "nodes": N}. Then per statement:
    {"sql": daft_sql, "tables": {name: {"files": [...]} | {"groups": [{"values": {column: value},
     "files": [...]}, …], "columns": [...], "types": {column: arrow type}} | {"ipc": path}}, "out_dir": folder,
     "delta": bool, "partition_by": [column, …]}
and it answers {"files": [...], "partitions": [{column: value text}, …], "nodes": N} once Daft's
workers have written the result as parquet files into `out_dir` (on the nodes where its
partitions are: the rows never come through this process), the files in the result's row order,
or {"error": text}. "delta": timestamps are written in microseconds, the only unit a Delta table
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


def _partitioned(spec: dict[str, Any]) -> Any:
    """A partitioned table (delta, hive folders): each group's files with its partition values as
    columns of the table's types, in the table's column order, the groups one after another."""
    import daft
    import pyarrow as pa

    frames = []
    for group in spec["groups"]:
        df = daft.read_parquet(group["files"])
        for column, value in group["values"].items():
            arrow = pa.type_for_alias(spec["types"][column].replace("[day]", ""))
            df = df.with_column(column, daft.lit(value).cast(daft.DataType.from_arrow_type(arrow)))
        frames.append(df.select(*spec["columns"]))
    out = frames[0]
    for df in frames[1:]:
        out = out.concat(df)
    return out


def run(request: dict[str, Any]) -> dict[str, Any]:
    import daft
    import pyarrow as pa

    if request.get("needs_cpu"):
        busy = wait_for_cpu()
        if busy:
            return {"error": busy, "nodes": cpu_nodes()}

    frames = {}
    for name, spec in request["tables"].items():
        if "files" in spec:
            frames[name] = daft.read_parquet(spec["files"])
        elif "groups" in spec:
            frames[name] = _partitioned(spec)
        else:
            with pa.memory_map(spec["ipc"]) as source:
                frames[name] = daft.from_arrow(pa.ipc.open_file(source).read_all())
    df = daft.sql(request["sql"], register_globals=False, **frames)
    if request.get("delta"):
        df = _microseconds(df)
    # Daft's native parquet writer (its Python writers import pyiceberg, which 0.7.26 lacks); the
    # answer lists the files in partition order, which is the result's order (a sort's too), and
    # an empty result still gets one file with the schema.
    keys = list(request.get("partition_by") or [])
    written = df.write_parquet(request["out_dir"], write_mode="append",
                               partition_cols=[daft.col(k) for k in keys] or None).to_pydict()
    files = [str(f) for f in written.get("path", [])]
    # Hive folders (key=value/, values escaped, null as __HIVE_DEFAULT_PARTITION__); each file's
    # values as Delta writes them in its log.
    values = [{k: _partition_text(written[k][i]) for k in keys} for i in range(len(files))] if keys else []
    return {"files": files, "partitions": values, "nodes": cpu_nodes(), "worker_nodes": worker_nodes(),
            "daft_actors": daft_actors()}


def _partition_text(value: Any) -> str | None:
    import datetime as dt

    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (bytes, bytearray)):
        raise ValueError("a binary partitionBy column cannot be saved from the cluster")
    return str(value)


def _microseconds(df: Any) -> Any:
    """Timestamp columns in microseconds (a Delta table holds no other unit)."""
    import daft

    for field in df.schema():
        kind = field.dtype
        if str(kind).startswith("Timestamp[") and not str(kind).startswith("Timestamp[us"):
            tz = kind.timezone
            df = df.with_column(field.name, daft.col(field.name).cast(daft.DataType.timestamp("us", tz)))
    return df


def _message(exc: BaseException) -> str:
    """The cause's own words: a Ray task error's last line, without colours or the remote traceback."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:2000]


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
            reply = {"error": _message(exc)}
        out.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
