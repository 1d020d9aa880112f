"""Reports the parity harnesses' counts (test_local_parity.py, test_cluster_parity.py) at the end of a run."""
from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from tests.spark import cluster_harness, harness

    engines = (("local engine (DuckDB)", harness.REPORT), ("cluster engine (Daft)", cluster_harness.REPORT))
    for engine, report in engines:
        if report:
            parts = ", ".join(f"{how} {n}" for how, n in sorted(report.items()))
            terminalreporter.write_line(f"Spark parity, {engine}: {parts}")
