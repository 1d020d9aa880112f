"""A Python cell without `--%output` that never calls build_result shows its printed output only.

MLSQL answers such a cell with an empty one-column `value` table under a random name; a notebook
user expects what the cell printed and nothing else. These run real Python cells on the test
session's Ray head (tests/conftest.py).
"""
from __future__ import annotations

import pytest

from console.kernel.session import Session
from console.lang import Run, Select, parse_cell
from tests.conftest import stdout_of


@pytest.fixture
def session(ray_session: Session) -> Session:
    return ray_session


def test_only_a_cell_without_output_header_is_marked() -> None:
    plain = parse_cell("--%python\nprint(1)\n", cell=1, kind="python")
    named = parse_cell("--%python\n--%output=t\nprint(1)\n", cell=1, kind="python")
    assert [type(s) for s in plain] == [Run, Select]  # the select stays: a built result is shown
    # It names the cell's random output name, which the steps to skip all mention.
    assert plain[0].options["autoOutput"] == plain[1].table  # type: ignore[attr-defined]
    assert "autoOutput" not in named[0].options  # type: ignore[attr-defined]


def test_a_print_only_cell_has_no_result_and_adds_no_table(session: Session) -> None:
    before = set(session.tables)
    # A header setting runs first and used to leave its conf table as the cell's result.
    out = session.run_cell("--%python\n--%dataMode=model\nprint('hello from the cell')\n", kind="python", cell=1)
    assert out.ok, out.error
    assert "hello from the cell" in stdout_of(session)
    assert out.result is None
    assert out.tables_changed == []
    assert set(session.tables) == before


def test_a_cached_print_only_cell_saves_and_loads_nothing(session: Session) -> None:
    out = session.run_cell("--%python\n--%cache=true\nprint('cached nothing')\n", kind="python", cell=4)
    assert out.ok, out.error
    assert out.result is None and out.tables_changed == []
    # (.home: matplotlib's and jedi's writable folders, console/kernel/userdirs.py)
    assert not session.cache_dir.exists() or not any(p.name != ".home" for p in session.cache_dir.iterdir())


def test_a_built_result_is_still_shown_and_is_not_left_stale(session: Session) -> None:
    # The same cell text compiles to the same table name (parses are cached), so a stale table
    # from the first run must not be shown by the second, which builds nothing.
    cell = """--%python
from pyjava.api.mlsql import RayContext
ctx = RayContext.connect(globals(), "127.0.0.1:10001")
if build:
    ctx.build_result([{"a": 1}, {"a": 2}])
print("built" if build else "printed only")
"""
    assert session.run_cell("--%python\nbuild = True\n", kind="python", cell=1).ok
    first = session.run_cell(cell, kind="python", cell=2)
    assert first.ok, first.error
    assert first.result is not None and first.result.total_rows == 2
    assert session.run_cell("--%python\nbuild = False\n", kind="python", cell=1).ok
    second = session.run_cell(cell, kind="python", cell=2)
    assert second.ok, second.error
    assert second.result is None
    assert "printed only" in stdout_of(session)


def test_a_named_output_that_is_not_built_keeps_mlsqls_empty_table(session: Session) -> None:
    out = session.run_cell("--%python\n--%output=nothing\nprint('x')\n", kind="python", cell=3)
    assert out.ok, out.error
    assert out.result is not None and out.result.name == "nothing"
    assert session.tables["nothing"].column_names == ["value"] and session.tables["nothing"].num_rows == 0
