"""The frontend's pure helpers (log model, metrics series, paging, MLSQL tokenizer) under node:test."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

FRONTEND = Path(__file__).resolve().parents[2] / "frontend"


def test_node_unit_tests_pass() -> None:
    if shutil.which("node") is None:
        pytest.fail("node is not installed (the frontend build needs it too)")
    if not (FRONTEND / "node_modules").exists():
        pytest.fail("run `make setup` (npm ci) first")
    proc = subprocess.run(["node", "--test", "test/"], cwd=FRONTEND, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
