"""SQL as Spark users write it: range(n) gives `id`; sum over text explains inferSchema."""
from __future__ import annotations

import pytest

from console.kernel.session import Session
from console.kernel.sql import transpile


def test_range_gives_an_id_column_as_in_spark(session: Session) -> None:
    out = session.run_cell("select * from range(250) as r;")
    assert out.ok and out.result is not None
    assert [c["name"] for c in out.result.columns] == ["id"] and out.result.total_rows == 250
    out = session.run_cell("select max(a.id) as m from range(2, 10) a join range(5) b on a.id = b.id as j;")
    assert out.ok and out.result is not None and out.result.rows == [[4]]


@pytest.mark.parametrize("sql, duck", [
    ("select * from range(3)", "SELECT * FROM RANGE(3) AS range(id)"),
    ("select x from range(3) t(x)", "SELECT x FROM RANGE(3) AS t(x)"),  # the user's own column name stays
])
def test_range_transpiles(sql: str, duck: str) -> None:
    assert transpile(sql)[0] == duck


def test_sum_over_text_suggests_infer_schema_or_a_cast(session: Session) -> None:
    assert session.run_cell("select 'a' as k, '1' as v as t;").ok
    out = session.run_cell("select k,\n  sum(v) as s from t group by k as g;")
    assert not out.ok and out.error is not None
    assert 'inferSchema="true"' in out.error.message and "cast(col as double)" in out.error.message
    assert "sum(VARCHAR)" in out.error.message
    assert (out.error.line, out.error.column) == (2, 3)  # at the user's sum, not DuckDB's rewritten text
