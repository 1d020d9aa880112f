"""What a run's manifest costs the kernel: a cell that loads and saves delta tables, and `select 1`.

One kernel session in this process (console.kernel.session.Session, no server): each cell runs
with the manifest recorded as always, and with its recording switched off (Session._record_io a
no-op and sources.delta.watching yielding a list nobody reads), interleaved, `--runs` times each;
the medians and their ratio. The server's side (checking delta versions against the log and
storing the row) runs as the run ends, after the kernel has sent run_ended, so it is not in a
cell's time; `--server` times it on its own for the delta cell's entries.

    python bench/manifest_overhead.py [--runs 60] [--rows 10000] [--server]

Targets (issue 32): at most 5% on the delta cell, at most 1 ms on `select 1`.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from console.config import load_config  # noqa: E402
from console.kernel.session import Session  # noqa: E402
from console.sources import delta  # noqa: E402

DELTA_CELL = "load delta.`bench.src` as x;\nselect a + 1 as a, b from x as y;\nsave overwrite y as delta.`bench.dst`;"
SELECT_1 = "select 1 as a as one;"


@contextlib.contextmanager
def _not_watching() -> Iterator[list[int]]:
    yield []


def _timed(session: Session, cell: str) -> float:
    started = time.perf_counter()
    outcome = session.run_cell(cell)
    elapsed = time.perf_counter() - started
    assert outcome.ok, outcome.error
    return elapsed


def measure(session: Session, cell: str, runs: int) -> tuple[float, float]:
    """(median with the manifest, median without), in seconds, interleaved."""
    on: list[float] = []
    off: list[float] = []
    record, watching = session._record_io, delta.watching
    for _ in range(runs):
        on.append(_timed(session, cell))
        session._record_io = lambda *a, **k: None  # type: ignore[method-assign]
        delta.watching = _not_watching
        try:
            off.append(_timed(session, cell))
        finally:
            session._record_io, delta.watching = record, watching  # type: ignore[method-assign]
    return statistics.median(on), statistics.median(off)


def server_side(data_dir: Path, session: Session, runs: int) -> float:
    """Median seconds of the server's check of the delta cell's entries (no store write)."""
    from console.server.sessions import manifests
    from console.server.sessions.manifests import _plain

    entries = [_plain(e) for e in session.run_cell(DELTA_CELL).io]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        checked = manifests.verify(data_dir / "lake", entries, time.time() - 60, time.time())
        times.append(time.perf_counter() - started)
    assert all(e["verified"] for e in checked), checked
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--server", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        session = Session(load_config({"DATA_DIR": str(data_dir)}), session_id="bench")
        try:
            setup = session.run_cell(f"select id as a, cast(id as string) as b from range({args.rows}) as t;\n"
                                     "save overwrite t as delta.`bench.src`;")
            assert setup.ok, setup.error
            for cell in (DELTA_CELL, SELECT_1):  # warm
                for _ in range(3):
                    _timed(session, cell)
            results: dict[str, Any] = {}
            for name, cell in (("delta load + save", DELTA_CELL), ("select 1", SELECT_1)):
                on, off = measure(session, cell, args.runs)
                results[name] = (on, off)
                print(f"{name:18s} with manifest {on * 1000:8.2f} ms   without {off * 1000:8.2f} ms   "
                      f"+{(on - off) * 1000:6.2f} ms ({(on / off - 1) * 100:+.1f}%)")
            if args.server:
                check = server_side(data_dir, session, args.runs)
                print(f"server's check of the delta cell's entries: {check * 1000:.2f} ms")
            on, off = results["delta load + save"]
            print(f"manifest_delta_cell_added: {(on / off - 1) * 100:+.1f} % (target <= 5 %)")
            on, off = results["select 1"]
            print(f"manifest_select1_added: {(on - off) * 1000:.2f} ms (target <= 1 ms)")
        finally:
            session.shutdown()


if __name__ == "__main__":
    main()
