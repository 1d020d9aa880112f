"""Reports the parity harness's counts (tests/spark/test_local_parity.py) at the end of a run."""
from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from tests.spark.harness import REPORT

    if REPORT:
        parts = ", ".join(f"{how} {n}" for how, n in sorted(REPORT.items()))
        terminalreporter.write_line(f"Spark parity, local engine (DuckDB): {parts}")
