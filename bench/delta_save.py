"""Benchmark: our `save overwrite … as delta` against a plain `write_deltalake` of the same table.

Both write the same in-memory Arrow table (2.5M rows, ~100 MB) as an overwrite, interleaved so
disk caches and background noise hit both alike; the figure is the ratio of the medians.
Run: .venv/bin/python bench/delta_save.py [--rows N] [--repeats N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import pyarrow as pa
from deltalake import write_deltalake

from console.sources import Source, SourceContext, get_source

TARGET = 1.15


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(7)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "label": pa.array(rng.integers(0, 10, rows, dtype=np.int64)),
        "x": pa.array(rng.random(rows)),
        "y": pa.array(rng.random(rows, dtype=np.float32)),
        "name": pa.array(np.char.add("row-", (np.arange(rows) % 5000).astype(str)).astype(object)),
    })


def wrapper_overhead(source: Source, ctx: SourceContext, table: pa.Table, calls: int = 200) -> float:
    """Seconds our save adds around write_deltalake, measured with the write itself stubbed out."""
    import deltalake

    real = deltalake.write_deltalake
    deltalake.write_deltalake = lambda *a, **k: None
    try:
        start = time.perf_counter()
        for _ in range(calls):
            source.write(ctx, table, "bench.ours", "overwrite", {}, [])
        return (time.perf_counter() - start) / calls
    finally:
        deltalake.write_deltalake = real


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_500_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    table = make_table(args.rows)
    print(f"table: {table.num_rows} rows, {table.nbytes / 1e6:.0f} MB in memory")
    with tempfile.TemporaryDirectory(prefix="delta-bench-") as tmp:
        ctx = SourceContext(data_dir=Path(tmp))
        source = get_source("delta")
        plain_path = str(Path(tmp) / "plain")

        def ours() -> None:
            source.write(ctx, table, "bench.ours", "overwrite", {}, [])

        def plain() -> None:
            write_deltalake(plain_path, table, mode="overwrite")

        ours(), plain()  # warm-up: first write creates the tables and loads the native library
        timings: dict[str, list[float]] = {"ours": [], "plain": []}
        for i in range(args.repeats):
            # Alternate which goes first so neither always follows the other's page-cache flush.
            order = [("ours", ours), ("plain", plain)] if i % 2 == 0 else [("plain", plain), ("ours", ours)]
            for name, fn in order:
                start = time.perf_counter()
                fn()
                timings[name].append(time.perf_counter() - start)

        overhead = wrapper_overhead(source, ctx, table)

    ours_s, plain_s = statistics.median(timings["ours"]), statistics.median(timings["plain"])
    ratio = ours_s / plain_s
    print(f"{'':24}{'median':>10}{'min':>10}{'max':>10}")
    for name, label in (("ours", "get_source('delta')"), ("plain", "write_deltalake")):
        t = timings[name]
        print(f"{label:24}{statistics.median(t):>9.3f}s{min(t):>9.3f}s{max(t):>9.3f}s")
    print(f"wrapper overhead without the write itself: {overhead * 1e6:.0f} us per save")
    print(f"delta_save_seconds: {ours_s:.3f} s (plain write_deltalake {plain_s:.3f} s)")
    print(f"delta_save_ratio: {ratio:.2f} x (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
