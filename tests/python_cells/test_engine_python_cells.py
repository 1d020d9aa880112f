"""Python cells through the engine on the real runtime: result, cache, errors, the catalog kept."""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from console.config import load_config
from console.kernel.session import Session


@pytest.fixture
def session(ray_cfg: Any, tmp_path: Any) -> Iterator[Session]:
    cfg = load_config({**ray_cfg, "DATA_DIR": ray_cfg["DATA_DIR"]})
    events: list[Any] = []
    s = Session(cfg, events.append, session_id="engine-py")
    s.events = events  # type: ignore[attr-defined]
    yield s
    s.shutdown()


CELL = """--%python
--%input=numbers
--%output=doubled
--%cache=true

from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
rows = [{"n": r["n"], "twice": r["n"] * 2} for r in ray_context.collect()]
print(f"rows {len(rows)}")
ray_context.build_result(rows)
"""


def test_python_cell_result_goes_to_the_catalog_and_the_cache(session: Session) -> None:
    assert session.run_cell("select id as n from range(10) t(id) as numbers;").ok
    assert session.run_cell('!python conf "schema=st(field(n,long),field(twice,long))";').ok
    out = session.run_cell(CELL, kind="python", cell=2)
    assert out.ok, out.error
    assert out.result is not None and out.result.name == "doubled" and out.result.total_rows == 10
    table = session.tables["doubled"].sort_by("n")
    assert table.column("twice").to_pylist() == [2 * i for i in range(10)]
    assert (session.cache_dir / "doubled").exists()
    assert "rows 10\n" in "".join(e.text for e in session.events if e.type == "output")  # type: ignore[attr-defined]
    # a SQL cell sees the Python cell's output like any other table
    assert session.run_cell("select sum(twice) as s from doubled as total;").ok
    assert session.tables["total"].column("s").to_pylist() == [90]


def test_python_error_names_the_cell_line_and_keeps_the_catalog(session: Session) -> None:
    assert session.run_cell("select 1 as n as numbers;").ok
    before = dict(session.tables)
    out = session.run_cell("--%python\n--%input=numbers\n--%output=o\nx = 1\ny = x / 0\n", kind="python", cell=4)
    assert not out.ok and out.error is not None
    assert out.error.kind == "python" and out.error.line == 5
    assert "ZeroDivisionError" in out.error.message
    assert session.tables == before
