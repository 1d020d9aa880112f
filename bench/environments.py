"""Notebook environments (`%pip install`, docs/environments.md), measured on kernel sessions.

- pip_install_cold: a `%pip install` of a small pure-Python package from a local wheelhouse into
  a data dir that has no layer and no uv cache yet (resolve, lock, install). Target ≤ 10 s.
- pip_install_cached: the same requirement in another notebook: its lock names a layer that is
  already there. Target ≤ 1 s.
- first_cell_env / first_cell_base: a new session's first Python cell (the worker's start)
  with that environment against one without. Target ≤ 1.1x.
The first Ray actor in a notebook environment: bench/environments_ray.py (through a sandboxed server).

    python bench/environments.py [--repeats N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests' harness: tests/support

from console.config import load_config  # noqa: E402
from console.kernel.session import Session  # noqa: E402
from tests.support.wheels import make_wheel  # noqa: E402

PIP = "%pip install benchpkg==1.0\n"
CELL = "import sys\nprint(len(sys.path))\n"


def timed(session: Session, source: str) -> float:
    start = time.perf_counter()
    out = session.run_cell(source, kind="python", cell=uuid.uuid4().hex[:6])
    elapsed = time.perf_counter() - start
    if not out.ok:
        raise SystemExit(f"cell failed: {out.error}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheels = Path(tmp) / "wheels"
        wheels.mkdir()
        make_wheel(wheels, "benchpkg", "1.0", '__version__ = "1.0"\n')
        cfg = load_config({"DATA_DIR": str(Path(tmp) / "data"), "PIP_INDEX_URL": "none",
                           "PIP_FIND_LINKS": str(wheels)})

        def session(name: str) -> Session:
            return Session(cfg, lambda event: None, session_id=name)

        sessions: list[Any] = []
        try:
            first = session("cold")
            sessions.append(first)
            cold = timed(first, PIP)
            cached = []
            for i in range(args.repeats):
                s = session(f"cached-{i}")
                sessions.append(s)
                cached.append(timed(s, PIP))
            with_env, base = [], []
            for i in range(args.repeats):  # alternated, so both see the same machine
                s = session(f"cached-{i}")  # a new kernel of a notebook with the environment
                sessions.append(s)
                with_env.append(timed(s, CELL))
                s.shutdown()
                b = session(f"base-{i}")
                sessions.append(b)
                base.append(timed(b, CELL))
                b.shutdown()
        finally:
            for s in sessions:
                s.shutdown()
    env_ms, base_ms = statistics.median(with_env) * 1000, statistics.median(base) * 1000
    ratio = env_ms / base_ms
    misses = [cold > 10, statistics.median(cached) > 1, ratio > 1.1]
    print(f"pip_install_cold: {cold:.2f} s (target ≤10 s)")
    print(f"pip_install_cached: {statistics.median(cached):.2f} s median of {len(cached)} (target ≤1 s)")
    print(f"first_cell_env: {env_ms:.0f} ms, first_cell_base: {base_ms:.0f} ms")
    print(f"first_cell_env_ratio: {ratio:.2f} x (target ≤1.1x)")
    return 1 if any(misses) else 0


if __name__ == "__main__":
    sys.exit(main())
