"""How much our engine (Session.run_cell) adds over plain DuckDB: a 1M-row group-by and a parquet load.

Both sides run in this process, interleaved, several times; the figures are medians. The plain
side does the same work by hand: register the Arrow table with DuckDB and query it; for the
load, read the parquet file with pyarrow, register it and count it (our `load` reads it into
the catalog the same way, then `select count(*)` runs over it).

    python bench/sql_overhead.py [--rows N] [--repeats N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from console.config import load_config
from console.kernel.session import Session
from console.protocols import CellOutcome

TARGET = 1.15
GROUPBY_SPARK = "select k, count(*) as n, sum(v) as s, avg(v) as m from t group by k"
GROUPBY_DUCK = "SELECT k, count(*) AS n, sum(v) AS s, avg(v) AS m FROM t GROUP BY k"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def side_by_side(plain: Callable[[], object], ours: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median seconds of each, alternating which goes first so neither gets the warmer cache."""
    plain(), ours()  # warm up: first-query setup, file cache, transpile cache
    p: list[float] = []
    o: list[float] = []
    for i in range(repeats):
        if i % 2:
            o.append(timed(ours))
            p.append(timed(plain))
        else:
            p.append(timed(plain))
            o.append(timed(ours))
    return statistics.median(p), statistics.median(o)


def check(outcome: CellOutcome) -> None:
    if not outcome.ok:
        raise SystemExit(f"engine error: {outcome.error}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    table = pa.table({"k": rng.integers(0, 1000, args.rows), "v": rng.random(args.rows),
                      "label": rng.integers(0, 10, args.rows)})
    config = {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}

    with tempfile.TemporaryDirectory() as tmp:
        session = Session(load_config({"DATA_DIR": str(Path(tmp) / "data")}))  # data.parquet sits beside it
        con = duckdb.connect(":memory:", config=config)

        # 1. group-by over a catalog table
        session.tables["t"] = table
        con.register("t", table)
        cell = f"{GROUPBY_SPARK} as r;"
        g_plain, g_ours = side_by_side(lambda: con.sql(GROUPBY_DUCK).to_arrow_table(),
                                       lambda: check(session.run_cell(cell)), args.repeats)

        # 2. parquet load + count
        path = Path(tmp) / "data.parquet"
        pq.write_table(table, path)

        def plain_load() -> None:
            loaded = pq.read_table(path)
            con.register("p", loaded)
            con.sql("SELECT count(*) AS n FROM p").to_arrow_table()

        load_cell = f"load parquet.`{path}` as p; select count(*) as n from p as c;"
        l_plain, l_ours = side_by_side(plain_load, lambda: check(session.run_cell(load_cell)), args.repeats)
        session.shutdown()

    print(f"rows: {args.rows}, repeats: {args.repeats} (medians)")
    print(f"sql_groupby_plain: {g_plain * 1000:.1f} ms")
    print(f"sql_groupby_engine: {g_ours * 1000:.1f} ms")
    print(f"parquet_load_plain: {l_plain * 1000:.1f} ms")
    print(f"parquet_load_engine: {l_ours * 1000:.1f} ms")
    print(f"sql_groupby_ratio: {g_ours / g_plain:.2f} x (target <= {TARGET})")
    print(f"parquet_load_ratio: {l_ours / l_plain:.2f} x (target <= {TARGET})")


if __name__ == "__main__":
    main()
