"""Golden files: tests/fixtures/*.mlsql parse to exactly what <name>.parse says.

UPDATE_GOLDEN=1 rewrites the expected files from the current parser (review the diff).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from console.lang import ParseError, parse_cell

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# byzer/: Byzer-style scripts (commands, machine learning, extensions), golden-tested the same way.
CASES = sorted([*FIXTURES.glob("*.mlsql"), *FIXTURES.glob("byzer/*.mlsql")])


def parse_dump(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    try:
        stmts = parse_cell(text, cell=1)
    except ParseError as exc:
        return f"ParseError\n  line: {exc.line}\n  column: {exc.column}\n  expected: {exc.expected!r}\n{exc}\n"
    return "\n\n".join(s.dump() for s in stmts) + "\n"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_parse_golden(path: Path) -> None:
    expected_path = path.with_suffix(".parse")
    actual = parse_dump(path)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        expected_path.write_text(actual, encoding="utf-8")
    assert expected_path.exists(), f"no {expected_path.name}; run with UPDATE_GOLDEN=1 to create it"
    assert actual == expected_path.read_text(encoding="utf-8")
