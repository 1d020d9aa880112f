"""What a session's own Ray cluster costs (issue 29 item 2), measured side by side in one run.

Starts, as the server does for a sandboxed session (root, bubblewrap), a session's own head
(cluster/session_head.py) under a leased uid, then the data dir's shared head the old way
(cluster/head.py RayCluster.ensure), each `--repeats` times, and reports:
- the time from "the first Ray cell asks" to "its head answers", per-session vs the shared
  head already running (what a first Ray cell waited for before: nothing) and vs a shared head
  started cold;
- the memory an idle session cluster holds: the proportional set size of its cgroup's processes
  (the figure; a page shared with other processes counts its share), and their resident memory;
  the object store's pages are not counted until used;
- a first Ray cell of a fresh notebook, end to end through a real sandboxed server: on its own
  head taken from the pool (cluster/head_pool.py, waited for: "the pool warm"), on its own head
  without a pool (warmed when the run is sent), against one shared head already running (what a
  first Ray cell cost before, with nothing to start);
- the seed notebook (the demo: MNIST on two TensorFlow actors, 2,000 synthetic rows), Run all of
  a fresh notebook to done through each server (its own head from the pool / one shared head),
  alternated so both see the same load.

Run as root with bwrap installed (`make bench` on this machine); elsewhere it says why it cannot.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from console.cluster import sandbox, walls  # noqa: E402
from console.cluster.head import RayCluster, short_temp_dir  # noqa: E402
from console.cluster.session_head import SessionCluster  # noqa: E402
from console.config import load_config  # noqa: E402

TARGET_EXTRA_S = 1.5  # a first Ray cell on its own head against a shared one already up (issue 29)
TARGET_SEED = 1.15  # the seed's Run all on its own head against one shared head (issue 29)
TARGET_IDLE_MB = 150.0  # issue 29: "an idle session's cluster costs at most ~150 MB"


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    return total / (1 << 20)


def _pss_mb(pids: list[int]) -> float:
    """Proportional set size: a page shared by n processes counts 1/n. What one more session's
    head adds to the machine, where resident memory counts Ray's shared libraries once per process."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                total += next(int(line.split()[1]) for line in fh if line.startswith("Pss:")) * 1024
        except (OSError, ValueError, StopIteration):
            continue
    return total / (1 << 20)


def _cgroup_pids(cluster: SessionCluster) -> list[int]:
    group = cluster._cgroup
    pids: list[int] = []
    for procs in group.procs_files() if group is not None else []:
        try:
            pids += [int(p) for p in procs.read_text().split()]
        except (OSError, ValueError):
            continue
    return pids


RAY_CELL = ("--%python\nimport ray\nfrom pyjava.api.mlsql import RayContext\n"
            "RayContext.connect(globals(), '127.0.0.1:10001')\nprint(ray.get(ray.remote(lambda: 1).remote()))\n")


def _pool_warm(live: object) -> None:
    """Wait until the server's pool has its head up (the issue's "with the pool warm")."""
    pool = live.manager.pool  # type: ignore[attr-defined]
    if pool is not None and not pool.wait_ready(1, 180):
        raise SystemExit(f"the pool's head did not come up: {pool._failed}")


def _first_ray_cells(clusters: str, repeats: int, pool: int = 0) -> list[float]:
    """Seconds from Run to done of a fresh notebook's one Ray cell, `repeats` fresh notebooks; with
    `pool`, each starts once the pool's head is up."""
    from tests.support.live_server import REAL_KERNEL, LiveServer

    data_dir = Path(tempfile.mkdtemp(prefix=f"bench-first-ray-{clusters}-")) / "data"
    live = LiveServer(str(data_dir), kernel_module=REAL_KERNEL, RAY_CLUSTERS=clusters, RAY_NUM_CPUS=2,
                      RAY_POOL=pool)
    try:
        user = live.store.ensure_user("admin")
        times = []
        for k in range(repeats + 1):  # the first run warms what a server keeps (the shared head, caches)
            _pool_warm(live)
            nb = live.notebook(("python", RAY_CELL))
            t0 = time.perf_counter()
            run_ids = live.manager.run(user.id, nb.id, "all", None)
            deadline = time.monotonic() + 300
            while any(live.store.get_run(r).status in ("queued", "running") for r in run_ids):
                if time.monotonic() > deadline:
                    raise SystemExit(f"{clusters}: the Ray cell did not end in 300 s")
                time.sleep(0.05)
            took = time.perf_counter() - t0
            statuses = [live.store.get_run(r).status for r in run_ids]
            if statuses != ["done"]:
                raise SystemExit(f"{clusters}: the Ray cell ended {statuses}")
            if k:
                times.append(took)
            # Its kernel (and own head) go before the next notebook: the machine stays quiet.
            kernel = live.manager.session(user.id, nb.id).kernel
            live.manager.shut_down(live.manager.session(user.id, nb.id), user.id)
            if kernel is not None:
                kernel.stop(3.0)
        return times
    finally:
        live.close()


def _seed_runs(repeats: int) -> dict[str, list[float]]:
    """Run all of the seed notebook, fresh each time, on a session head and on a shared head, alternated."""
    from console.demo import seed_notebook
    from console.demo.datasets import write_mnist
    from tests.support.live_server import REAL_KERNEL, LiveServer

    times: dict[str, list[float]] = {"session": [], "shared": []}
    servers = {}
    try:
        for mode in times:
            data_dir = Path(tempfile.mkdtemp(prefix=f"bench-seed-{mode}-")) / "data"
            mnist = data_dir / "lake" / "mnist-bench" / "mnist"  # kernels have a private /tmp: data in the lake
            write_mnist(str(mnist), synthetic=True, rows=2000, partitions=2)
            servers[mode] = (LiveServer(str(data_dir), kernel_module=REAL_KERNEL, RAY_CLUSTERS=mode, RAY_NUM_CPUS=2,
                                        RAY_POOL=1 if mode == "session" else 0), mnist)
        for k in range(repeats + 1):  # the first round warms both (imports, the shared head)
            for mode, (live, mnist) in servers.items():
                cells = seed_notebook()["cells"]
                cells[0] = {**cells[0], "source": cells[0]["source"].replace("/tmp/mnist", str(mnist))}
                user = live.store.ensure_user("admin")
                _pool_warm(live)
                nb = live.store.create_notebook(f"seed-{k}-{time.monotonic_ns()}", owner_id=user.id, cells=cells)
                t0 = time.perf_counter()
                run_ids = live.manager.run(user.id, nb.id, "all", None)
                while any(live.store.get_run(r).status in ("queued", "running") for r in run_ids):
                    time.sleep(0.1)
                took = time.perf_counter() - t0
                statuses = [live.store.get_run(r).status for r in run_ids]
                if statuses != ["done"] * len(run_ids):
                    raise SystemExit(f"the seed on the {mode} head ended {statuses}")
                if k:
                    times[mode].append(took)
                session = live.manager.session(user.id, nb.id)
                kernel = session.kernel
                live.manager.shut_down(session, user.id)
                if kernel is not None:
                    kernel.stop(3.0)
    finally:
        for live, _ in servers.values():
            live.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed-repeats", type=int, default=2)
    args = parser.parse_args()
    if os.geteuid() != 0 or sandbox.unavailable_reason():
        print(f"session_cluster: needs root and a working bwrap ({sandbox.unavailable_reason() or 'not root'})")
        raise SystemExit(1)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-session-cluster-")) / "data"
    cfg = load_config({"DATA_DIR": str(data_dir), "RAY_NUM_CPUS": 2, "RAY_CLIENT_PORT": 0})
    own_starts: list[float] = []
    idle_mb: list[float] = []
    idle_pss_mb: list[float] = []
    for k in range(args.repeats):
        wall = walls.session(cfg, f"bench-{k}", True, short_temp_dir(cfg.data_dir))
        cluster = SessionCluster(cfg, f"bench-{k}", wall)
        cluster.prepare()
        try:
            t0 = time.perf_counter()
            cluster.ensure()
            own_starts.append(time.perf_counter() - t0)
            time.sleep(5)  # idle: what it holds once Ray settled
            idle_mb.append(_rss_mb(_cgroup_pids(cluster)))
            idle_pss_mb.append(_pss_mb(_cgroup_pids(cluster)))
        finally:
            cluster.stop()
            wall.release()
    shared = RayCluster(cfg)
    try:
        t0 = time.perf_counter()
        shared.ensure(sandboxed=True)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        shared.ensure(sandboxed=True)
        warm = time.perf_counter() - t0
    finally:
        shared.stop(grace=3.0)
    first_own = _first_ray_cells("session", args.repeats, pool=0)
    first_pooled = _first_ray_cells("session", args.repeats, pool=1)
    first_shared = _first_ray_cells("shared", args.repeats)
    seed = _seed_runs(args.seed_repeats)
    own = statistics.median(own_starts)
    print(f"session head start (s): {', '.join(f'{s:.2f}' for s in own_starts)}; shared head cold {cold:.2f}, "
          f"already running {warm:.3f}")
    print(f"idle session cluster (MB resident): {', '.join(f'{m:.0f}' for m in idle_mb)}; "
          f"proportional (PSS): {', '.join(f'{m:.0f}' for m in idle_pss_mb)}")
    print("first Ray cell of a fresh notebook (s): own head from the pool "
          f"{', '.join(f'{t:.2f}' for t in first_pooled)}; "
          f"own head, no pool {', '.join(f'{t:.2f}' for t in first_own)}; "
          f"shared head {', '.join(f'{t:.2f}' for t in first_shared)}")
    extra = statistics.median(first_pooled) - statistics.median(first_shared)
    extra_no_pool = statistics.median(first_own) - statistics.median(first_shared)
    print(f"seed notebook Run all (s): own head {', '.join(f'{t:.1f}' for t in seed['session'])}; "
          f"shared head {', '.join(f'{t:.1f}' for t in seed['shared'])}")
    seed_ratio = statistics.median(seed["session"]) / statistics.median(seed["shared"])
    print(f"session_cluster_head_start: {own - warm:.2f} s (reported)")
    print(f"session_cluster_seed_vs_shared: {seed_ratio:.2f} x (target <= {TARGET_SEED})")
    print(f"session_cluster_first_ray_cell_extra: {extra:.2f} s (target <= {TARGET_EXTRA_S})")
    print(f"session_cluster_first_ray_cell_extra_no_pool: {extra_no_pool:.2f} s (reported)")
    print(f"session_cluster_vs_shared_cold_start: {own / cold:.2f} x (reported)")
    print(f"session_cluster_idle_memory_rss: {statistics.median(idle_mb):.0f} MB (reported)")
    print(f"session_cluster_idle_memory_pss: {statistics.median(idle_pss_mb):.0f} MB (target <= {TARGET_IDLE_MB:.0f})")
    if extra > TARGET_EXTRA_S or statistics.median(idle_pss_mb) > TARGET_IDLE_MB or seed_ratio > TARGET_SEED:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
