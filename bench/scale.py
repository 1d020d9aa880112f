"""10x the data: a 600k-row MNIST-shaped parquet set through `load` -> Python cell -> 2 actors.

Each of 2 actors computes the mean of its partition's images. Sides, on one embedded Ray head
(started first, not timed), interleaved per repeat:
- product, direct read (the default: no `--%directRead`): a fresh Session runs `load parquet.`…` as mnist;`
  (the footers only: loads are lazy) then the Python cell (cold worker); the cell's input is the
  loaded table, so each actor reads its own row groups;
- product, kernel path (`--%directRead=false`): the same, the kernel streams the files into an
  IPC file on /dev/shm that actors map;
- plain: a fresh `python` process (timed from launch to its last line) that connects to the head
  and starts 2 actors that read their halves of the same parquet files with pyarrow.
The mean is computed by the same code on every side (chunk by chunk over the Arrow column).
Peak RSS: the kernel is this process (VmHWM reset before each run through /proc/self/clear_refs);
each actor reports its own VmHWM. RSS counts pages of shared memory an actor touched (a mapped
IPC file), so the kernel path's actors show the table's bytes though nothing was copied.
The set is generated once into a cache folder (--cache, default ~/.cache/mlsql-console-bench),
50k rows per parquet file, and reused by later runs.
Three repeats by default, each in a rotated order (a cold worker's start varies by seconds on a
shared machine, and one repeat once put the kernel path at 1.45x where two gave 0.71x).
Usage: python bench/scale.py [--rows 600000] [--repeat 3] [--paths direct,kernel]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FILE_ROWS = 50_000

MEAN = r'''
def peak_rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0

def image_mean(table):
    import numpy as np
    total, count = 0, 0
    for chunk in table.column("image").chunks:
        values = chunk.flatten().to_numpy()
        total += int(values.sum(dtype=np.int64))
        count += len(values)
    return total, count
'''

CELL = """--%python
--%input=mnist
--%output=means
--%schema=st(field(part,long),field(total,long),field(count,long),field(peak,long),field(direct,boolean))
{direct}
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
servers = ray_context.data_servers()
{mean}
@ray.remote
class Mean:
    def run(self, server):
        total, count = image_mean(RayContext.collect_arrow(server))
        return total, count, peak_rss()

actors = [Mean.remote() for _ in servers]
out = ray.get([a.run.remote(s) for a, s in zip(actors, servers)])
ray_context.build_result([{{"part": i, "total": t, "count": c, "peak": p, "direct": s.pieces is not None}}
                          for i, ((t, c, p), s) in enumerate(zip(out, servers))])
"""

PLAIN = r'''
import sys, time
t0 = time.perf_counter()
import pyarrow.parquet as pq, ray
ray.init(address=sys.argv[1], logging_level="ERROR")
files = sys.argv[2:]
MEAN_CODE
@ray.remote
class Mean:
    def run(self, paths):
        total, count = image_mean(pq.read_table(paths))
        return total, count, peak_rss()

half = len(files) // 2
actors = [Mean.remote() for _ in range(2)]
out = ray.get([actors[0].run.remote(files[:half]), actors[1].run.remote(files[half:])])
print("plain_result:", sum(o[0] for o in out), sum(o[1] for o in out), out[0][2], out[1][2], flush=True)
print("plain_done: %.2f" % (time.perf_counter() - t0), flush=True)
'''.replace("MEAN_CODE", MEAN)


def generate(folder: Path, rows: int, file_rows: int = FILE_ROWS) -> Path:
    """The set, written once: file_rows rows per file, made chunk by chunk (bounded memory)."""
    import pyarrow.parquet as pq

    from console.demo.datasets import synthetic_mnist, to_table

    target = folder / f"mnist-{rows}"
    done = target / "_complete"
    if done.exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for i, start in enumerate(range(0, rows, file_rows)):
        n = min(file_rows, rows - start)
        images, labels = synthetic_mnist(n, seed=1000 + i)
        pq.write_table(to_table(images, labels, synthetic=True), target / f"part-{i:04d}.parquet",
                       row_group_size=file_rows)
    done.write_text(f"{rows}\n")
    print(f"scale_generated: {rows} rows in {time.perf_counter() - t0:.1f} s into {target}", flush=True)
    return target


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS


def peak_rss() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=600_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--paths", default="direct,kernel")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "mlsql-console-bench"))
    args = ap.parse_args()
    if args.rows < 2 * FILE_ROWS:  # the plain script gives each of its 2 actors whole files
        ap.error(f"--rows must be at least {2 * FILE_ROWS} (two files of {FILE_ROWS} rows, one per actor)")
    import pyarrow.parquet as pq

    from console.cluster.guard import token_env
    from console.cluster.head import RAY_ENV, RayCluster
    from console.cluster.procs import free_port
    from console.config import load_config
    from console.kernel.session import Session

    data = generate(Path(args.cache), args.rows)
    files = sorted(str(p) for p in data.glob("*.parquet"))
    small = generate(Path(args.cache), 2000, 1000)  # the untimed warm-up's set
    table_bytes = sum(pq.ParquetFile(f).metadata.num_rows for f in files) * (784 + 1) * 8 + args.rows * 4
    work = Path(tempfile.mkdtemp(prefix="scalebench-", dir=str(Path.home())))  # not /tmp: sandboxes hide it
    cfg = load_config({"DATA_DIR": str(work / "data"), "RAY_NUM_CPUS": 2, "RAY_CLIENT_PORT": free_port(),
                       "DATA_ROOTS": [str(data), str(small)]})
    cluster = RayCluster(cfg)
    cluster.own()
    info = cluster.ensure()
    (work / "plain.py").write_text(PLAIN)
    env = {**os.environ, **RAY_ENV, **token_env(info.auth_token)}  # the head takes drivers with its token only
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    times: dict[str, list[float]] = {p: [] for p in [*paths, "plain"]}
    kernel_peak: dict[str, list[int]] = {p: [] for p in paths}
    kernel_base: dict[str, list[int]] = {p: [] for p in paths}
    actor_peak: dict[str, list[int]] = {p: [] for p in [*paths, "plain"]}
    expected: tuple[int, int] | None = None

    def product(path: str, folder: Path, timed: bool = True) -> None:
        nonlocal expected
        session = Session(cfg, lambda e: None, session_id=f"scale-{path}")
        try:
            direct = "" if path == "direct" else "--%directRead=false"
            cell = CELL.format(direct=direct, mean=MEAN)
            reset_peak()
            base = peak_rss()  # the kernel before the load: its code, DuckDB, pyarrow
            t0 = time.perf_counter()
            load = session.run_cell(f"load parquet.`{folder}` as mnist;")
            assert load.ok, load.error
            out = session.run_cell(cell, kind="python", cell=2)
            elapsed = time.perf_counter() - t0
            assert out.ok, out.error
            peak = peak_rss()
            means = session.tables["means"].to_pylist()
        finally:
            session.shutdown()
        assert all(r["direct"] == (path == "direct") for r in means), means
        if not timed:
            return
        kernel_peak[path].append(peak)
        kernel_base[path].append(base)
        result = (sum(r["total"] for r in means), sum(r["count"] for r in means))
        assert expected is None or result == expected, (result, expected)
        expected = result
        times[path].append(elapsed)
        actor_peak[path].append(max(r["peak"] for r in means))

    def plain(names: list[str], timed: bool = True) -> None:
        t0 = time.perf_counter()
        err = open(work / "plain.err", "w")  # a file, not a pipe: TensorFlow's chatter would fill a pipe
        proc = subprocess.Popen([sys.executable, str(work / "plain.py"), info.address, *names], env=env,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        assert proc.stdout is not None
        done, result = None, None
        for line in proc.stdout:
            if line.startswith("plain_result:"):
                result = [int(v) for v in line.split()[1:]]
            if line.startswith("plain_done:"):
                done = time.perf_counter() - t0
        if proc.wait() != 0 or done is None or result is None:
            err.close()
            tail = (work / "plain.err").read_text(errors="replace").splitlines()[-25:]
            raise RuntimeError(f"the plain script failed (exit {proc.returncode}); its stderr ends:\n"
                               + "\n".join(tail))
        err.close()
        if not timed:
            return
        assert expected is None or (result[0], result[1]) == expected
        times["plain"].append(done)
        actor_peak["plain"].append(max(result[2], result[3]))

    try:
        for path in paths:  # untimed: Ray's first worker processes and imports
            product(path, small, timed=False)
        plain(sorted(str(p) for p in small.glob("*.parquet")), timed=False)
        sides: list[str] = [*paths, "plain"]
        for i in range(args.repeat):
            for side in sides[i % len(sides):] + sides[:i % len(sides)]:
                if side == "plain":
                    plain(files)
                else:
                    product(side, data)
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    gb = 1e9
    p = med(times["plain"])
    print(f"scale_rows: {args.rows} rows ({table_bytes / gb:.2f} GB as Arrow), {args.repeat} repeats, "
          f"2 actors, load {os.getloadavg()[0]:.2f}")
    print(f"scale_plain_ray: {p:.2f} s (a plain Ray script whose actors read the parquet; "
          f"actor peak RSS {med(actor_peak['plain']) / gb:.2f} GB)")
    for path in paths:
        t = med(times[path])
        k = med(kernel_peak[path])
        grew = k - med(kernel_base[path])
        target = "0.3" if path == "direct" else "1.3"
        print(f"scale_{path}_wall: {t:.2f} s (load + Python cell, cold worker; min {min(times[path]):.2f}, "
              f"max {max(times[path]):.2f})")
        print(f"scale_{path}_vs_plain: {t / p:.2f} x (target <= 1.3)")
        print(f"scale_{path}_kernel_peak_rss: {k / table_bytes:.2f} x table ({k / gb:.2f} GB, of which "
              f"{grew / gb:.2f} GB since before the load; target < {target})")
        print(f"scale_{path}_actor_peak_rss: {med(actor_peak[path]) / table_bytes:.2f} x table "
              f"({med(actor_peak[path]) / gb:.2f} GB, the larger of the 2 actors)")


if __name__ == "__main__":
    main()
