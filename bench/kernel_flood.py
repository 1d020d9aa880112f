"""A kernel that floods its event pipe: how much the server grows (issue 21 §3).

A member's real Python cell writes to its own kernel's event pipe (tests/wire/forge_support.py):
300 MiB without a newline, then 100,000 answers to questions nobody asked. The server is this
process (tests/support's LiveServer with real kernels); the figure is the growth of its peak RSS
while the cell runs, beside the size of the flood. The code before console/wire/ grew by ~430 MB
and ~235 MB (issue 21's figures; ~730 MB for the long line on this VM).

    python bench/kernel_flood.py
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests' harness: tests/support
sys.path.insert(0, str(ROOT / "tests" / "wire"))

from forge_support import LONG_LINE, UNKNOWN_ANSWERS, peak_growth_kb  # noqa: E402
from tests.support.live_server import REAL_KERNEL, LiveServer  # noqa: E402

FLOODS = {"long_line": (LONG_LINE, 300 * 1024), "unknown_answers": (UNKNOWN_ANSWERS, 100_000 * 520 // 1024)}


def main() -> int:
    figures: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as data:
        # Unsandboxed: under the sandbox a cell cannot open its kernel's pipe at all (issue 20).
        live = LiveServer(data, kernel_module=REAL_KERNEL, SANDBOX="off")
        try:
            for name, (body, flood_kb) in FLOODS.items():
                grew, attack, session = peak_growth_kb(live, body)
                figures[name] = grew
                print(f"[{name}] flood {flood_kb // 1024} MB, server peak RSS +{grew / 1024:.1f} MB "
                      f"({grew / flood_kb:.3f}x the flood); cell {attack.status}; kernel {session.status} "
                      f"{session.reason[:100]}")
        finally:
            live.close()
    ok = all(v < 50 * 1024 for v in figures.values())
    for name, grew in figures.items():
        print(f"kernel_flood_{name}_rss: {grew / 1024:.1f} MB (target < 50 MB)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
