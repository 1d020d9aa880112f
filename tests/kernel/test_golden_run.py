"""Golden files: each runnable tests/fixtures/*.mlsql, run headless in a fresh session, prints exactly <name>.out.

Fixtures marked `golden: parse-only` and annotated Python cells (they need Ray) are parse-only.
Paths of the temporary data dir print as <data_dir>. UPDATE_GOLDEN=1 rewrites the expected files.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from console.config import load_config
from console.kernel.headless import run_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _runnable(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return "golden: parse-only" not in text and "--%python" not in text and "#%python" not in text


CASES = [p for p in sorted([*FIXTURES.glob("*.mlsql"), *FIXTURES.glob("byzer/*.mlsql")]) if _runnable(p)]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_run_golden(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # sqlite URLs and the like are relative to the working dir
    lines: list[str] = []
    code = run_file(path, load_config({"DATA_DIR": str(tmp_path)}), out=lines.append)
    actual = "\n".join(lines).replace(str(tmp_path.resolve()), "<data_dir>").replace(str(tmp_path), "<data_dir>")
    actual += f"\nexit: {code}\n"
    expected_path = path.with_suffix(".out")
    if os.environ.get("UPDATE_GOLDEN") == "1":
        expected_path.write_text(actual, encoding="utf-8")
    assert expected_path.exists(), f"no {expected_path.name}; run with UPDATE_GOLDEN=1 to create it"
    assert actual == expected_path.read_text(encoding="utf-8")
