"""Windows, EXCEPT and grouping sets on the cluster engine, through the cluster harness (Daft's
native runner, the product's steps): Spark's answers, worked out by hand from Spark's definitions,
or a refusal that names the construct and the local setting. Daft reads a window's ORDER BY
without a frame as the whole partition, and a RANGE frame as ROWS: those are refused, never
answered otherwise (daft_windows.py)."""
from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.kernel.errors import CellError

pytest.importorskip("daft")
T = "(VALUES (1, 'a', 1), (2, 'a', 2), (2, 'a', 4), (3, 'a', 8), (1, 'b', 1)) AS t(k, s, v)"


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    from tests.spark.cluster_harness import ClusterEngine

    with tempfile.TemporaryDirectory() as folder:
        yield ClusterEngine(Path(folder))


def rows(engine: Any, sql: str) -> list[tuple[Any, ...]]:
    table = engine.query(sql, {})
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def refusal(engine: Any, sql: str) -> str:
    with pytest.raises(CellError) as info:
        engine.query(sql, {})
    assert 'set sql.engine = "local"' in info.value.message
    return str(info.value.message)


def test_a_running_aggregate_is_refused_not_answered_for_the_whole_partition(engine: Any) -> None:
    said = refusal(engine, f"SELECT k, sum(v) OVER (PARTITION BY s ORDER BY k) AS w FROM {T}")
    assert "sum() over a window with ORDER BY and Spark's default frame" in said
    said = refusal(engine, f"SELECT k, percentile(v, 0.5) OVER (PARTITION BY s ORDER BY k) AS w FROM {T}")
    assert "default frame" in said
    said = refusal(engine, f"SELECT k, max(v) OVER (PARTITION BY s ORDER BY k RANGE BETWEEN 1 PRECEDING AND "
                           f"CURRENT ROW) AS w FROM {T}")
    assert "RANGE frame" in said
    # a running count(*) is the rows up to the row's last peer (n - rank over the reversed order + 1)
    assert rows(engine, f"SELECT s, v, count(*) OVER (PARTITION BY s ORDER BY k) AS w FROM {T}") == \
        [("a", 1, 1), ("a", 2, 3), ("a", 4, 3), ("a", 8, 4), ("b", 1, 1)]
    # a ROWS frame is Daft's, with or without PARTITION BY; so is RANGE over the whole partition
    assert rows(engine, f"SELECT s, k, v, sum(v) OVER (PARTITION BY s ORDER BY k, v ROWS BETWEEN UNBOUNDED "
                        f"PRECEDING AND CURRENT ROW) AS w FROM {T}") == \
        [("a", 1, 1, 1), ("a", 2, 2, 3), ("a", 2, 4, 7), ("a", 3, 8, 15), ("b", 1, 1, 1)]
    assert rows(engine, f"SELECT s, v, max(v) OVER (ORDER BY k, s, v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) "
                        f"AS w FROM {T}") == [("a", 1, 1), ("a", 2, 4), ("a", 4, 8), ("a", 8, 8), ("b", 1, 2)]
    assert rows(engine, f"SELECT s, v, count(*) OVER (PARTITION BY s ORDER BY k RANGE BETWEEN UNBOUNDED PRECEDING "
                        f"AND UNBOUNDED FOLLOWING) AS w FROM {T}") == \
        [("a", 1, 4), ("a", 2, 4), ("a", 4, 4), ("a", 8, 4), ("b", 1, 1)]


def test_lag_and_lead_without_partition_by(engine: Any) -> None:
    assert rows(engine, f"SELECT s, v, lag(v) OVER (ORDER BY k, s, v) AS p, lead(v, 2, 0) OVER (ORDER BY k, s, v) "
                        f"AS n FROM {T}") == \
        [("a", 1, None, 2), ("a", 2, 1, 8), ("a", 4, 2, 0), ("a", 8, 4, 0), ("b", 1, 1, 4)]


def test_percent_rank_cume_dist_and_ntile_as_spark_defines_them(engine: Any) -> None:
    got = rows(engine, f"SELECT s, v, percent_rank() OVER (PARTITION BY s ORDER BY k) AS p, cume_dist() OVER "
                       f"(PARTITION BY s ORDER BY k) AS c, ntile(3) OVER (PARTITION BY s ORDER BY k, v) AS n FROM {T}")
    assert got == [("a", 1, 0.0, 0.25, 1), ("a", 2, 1 / 3, 0.75, 1), ("a", 4, 1 / 3, 0.75, 2),
                   ("a", 8, 1.0, 1.0, 3), ("b", 1, 0.0, 1.0, 1)]
    # more buckets than rows: one row each; a descending order with NULLs (last, as Spark puts them)
    got = rows(engine, "SELECT k, ntile(5) OVER (ORDER BY k) AS n, cume_dist() OVER (ORDER BY k DESC) AS c "
                       "FROM VALUES (1), (2), (NULL), (4) AS t(k)")
    assert got == [(1, 2, 0.75), (2, 3, 0.5), (4, 4, 0.25), (None, 1, 1.0)]


def test_first_value_and_last_value_over_rows(engine: Any) -> None:
    assert rows(engine, f"SELECT s, v, first_value(v) OVER (PARTITION BY s ORDER BY k, v) AS f, last_value(v) OVER "
                        f"(PARTITION BY s ORDER BY k, v ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS l FROM {T}") == \
        [("a", 1, 1, 2), ("a", 2, 1, 4), ("a", 4, 1, 8), ("a", 8, 1, 8), ("b", 1, 1, 1)]
    assert "last peer" in refusal(engine, f"SELECT last_value(v) OVER (PARTITION BY s ORDER BY k) AS l FROM {T}")


def test_an_aggregate_duckdb_computes_over_a_partition_is_one_per_partition(engine: Any) -> None:
    from console.kernel.sqlengines.daft import transpile

    sql = ("SELECT s, v, percentile(v, 0.5) OVER (PARTITION BY s) AS m, v - median(v) OVER () AS d FROM "
           "(VALUES (1, 'a', 1), (2, 'a', 2), (2, 'a', 4), (3, 'a', 8), (1, 'b', 1), (4, NULL, 10)) AS t(k, s, v)")
    # a grouped select joined back by its keys, not a list of the partition's rows for every row
    assert " OVER " not in transpile(sql).sql
    # the median of all six is (2 + 4) / 2; a NULL key is a partition of its own
    assert rows(engine, sql) == [("a", 1, 3.0, -2.0), ("a", 2, 3.0, -1.0), ("a", 4, 3.0, 1.0), ("a", 8, 3.0, 5.0),
                                 ("b", 1, 1.0, -2.0), (None, 10, 10.0, 7.0)]


def test_except_is_an_anti_join_where_null_matches_null(engine: Any) -> None:
    assert rows(engine, f"SELECT s, k FROM {T} EXCEPT SELECT 'a', 2") == [("a", 1), ("a", 3), ("b", 1)]
    assert rows(engine, "SELECT k FROM VALUES (1), (2), (NULL), (2) AS t(k) EXCEPT SELECT k FROM VALUES (NULL) "
                        "AS u(k)") == [(1,), (2,)]
    assert "EXCEPT ALL" in refusal(engine, f"SELECT k FROM {T} EXCEPT ALL SELECT 1")


def test_cube_grouping_sets_and_grouping(engine: Any) -> None:
    assert rows(engine, f"SELECT s, grouping(s) AS g, sum(v) AS n FROM {T} GROUP BY CUBE(s)") == \
        [("a", 0, 15), ("b", 0, 1), (None, 1, 16)]
    got = rows(engine, f"SELECT s, k, grouping_id() AS i, count(*) AS n FROM {T} "
                       "GROUP BY GROUPING SETS ((s, k), (s), ())")
    assert got == [("a", 1, 0, 1), ("a", 2, 0, 2), ("a", 3, 0, 1), ("a", None, 1, 4), ("b", 1, 0, 1),
                   ("b", None, 1, 1), (None, None, 3, 5)]
    # Spark groups by the grouping id too: no rows, no groups, not even the grand total's
    assert rows(engine, f"SELECT s, count(*) AS n FROM {T} WHERE k > 10 GROUP BY CUBE(s)") == []


def test_dafts_schemas_are_said_in_one_line(engine: Any) -> None:
    said = refusal(engine, "SELECT k FROM VALUES (1) AS t(k) INTERSECT SELECT 1")
    assert "(k Int32)" in said and "╭" not in said


def test_exists_in_a_select_list(engine: Any) -> None:
    """Daft plans EXISTS only in WHERE: the select is the union of the rows where it holds and where not."""
    sql = ("SELECT x, EXISTS (SELECT 1 FROM VALUES (2), (NULL) AS u(y) WHERE y = x) AS e, x + 1 AS z "
           "FROM VALUES (1), (2), (NULL) AS t(x)")
    assert rows(engine, sql) == [(1, False, 2), (2, True, 3), (None, False, None)]
    table = engine.query(sql + " ORDER BY x DESC LIMIT 2", {})
    assert [tuple(r.values()) for r in table.to_pylist()] == [(2, True, 3), (1, False, 2)]
