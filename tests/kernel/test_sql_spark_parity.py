"""Spark's own answers (goldens.json, generated once with pyspark) against the local engine.

Each snippet either gives exactly Spark's rows or fails naming what it cannot translate; a
different answer fails the test. The share identical to Spark must stay at 90% or more.
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from console.kernel.errors import CellError
from console.kernel.sql import SqlEngine
from tests.kernel.spark_parity.compare import answer
from tests.kernel.spark_parity.data import SCHEMA, rows
from tests.kernel.spark_parity.snippets import SNIPPETS

GOLDENS = json.loads((Path(__file__).parent / "spark_parity" / "goldens.json").read_text())
# Snippets the local engine refuses by name (their construct has no DuckDB translation yet): none today.
REFUSED_LOCAL: dict[str, str] = {}


def parity_table() -> pa.Table:
    return pa.Table.from_pylist(rows(), pa.schema([(name, getattr(pa, kind)()) for name, _, kind in SCHEMA]))


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> SqlEngine:
    eng = SqlEngine(temp_dir=tmp_path_factory.mktemp("spill"), memory_limit=256 << 20)
    eng.con.execute("SET TimeZone = 'UTC'")  # the goldens were made in UTC
    return eng


@pytest.mark.parametrize("name,sql,ordered", SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_snippet_matches_spark_or_fails_by_name(engine: SqlEngine, name: str, sql: str, ordered: bool) -> None:
    golden = GOLDENS[name]
    if name in REFUSED_LOCAL:
        with pytest.raises(CellError) as info:
            engine.query(sql, {"t": parity_table()})
        assert REFUSED_LOCAL[name] in info.value.message and "DuckDB" in info.value.message
        return
    result = engine.query(sql, {"t": parity_table()})
    got = answer(result.column_names, [list(r.values()) for r in result.to_pylist()], ordered)
    assert got == golden


def test_parity_share() -> None:
    assert (len(SNIPPETS) - len(REFUSED_LOCAL)) / len(SNIPPETS) >= 0.9


def test_cast_truncates_like_spark(engine: SqlEngine) -> None:
    t = pa.table({"x": pa.array([38.9, -38.9, 2.5], pa.float64()), "s": ["38.9", " 7 ", "x"],
                  "big": pa.array([9007199254740993, -3, 0], pa.int64())})
    out = engine.query("select cast(x as int) a, cast(s as bigint) b, cast(big as bigint) c, "
                       "cast(38.9 as int) d from t", {"t": t}).to_pydict()
    assert out == {"a": [38, -38, 2], "b": [38, 7, None], "c": [9007199254740993, -3, 0], "d": [38, 38, 38]}


def test_a_subquery_column_of_text_is_not_taken_for_the_input_number(engine: SqlEngine) -> None:
    t = pa.table({"x": pa.array([38.9, -2.5], pa.float64())})
    out = engine.query("select cast(x as int) as a from (select cast(x as string) as x from t)", {"t": t})
    assert out.column("a").to_pylist() == [38, -2]


def test_from_json_takes_spark_ddl(engine: SqlEngine) -> None:
    t = pa.table({"p": ['{"k": 1, "v": "a", "xs": [1, 2]}', "oops", None]})
    out = engine.query("select from_json(p, 'k INT, v STRING, xs ARRAY<BIGINT>').v as v, "
                       "from_json(p, 'k INT, v STRING, xs ARRAY<BIGINT>') as j from t", {"t": t}).to_pydict()
    assert out["v"] == ["a", None, None]
    assert out["j"] == [{"k": 1, "v": "a", "xs": [1, 2]}, {"k": None, "v": None, "xs": None}, None]


def test_refused_construct_names_itself_at_its_place(engine: SqlEngine) -> None:
    with pytest.raises(CellError) as info:
        engine.query("select id,\n  hash(id) as h from t", {"t": parity_table()}, line=3, column=8)
    assert "hash()" in info.value.message and "DuckDB" in info.value.message
    assert (info.value.line, info.value.column) == (4, 3)


def test_unknown_date_letter_fails_by_name(engine: SqlEngine) -> None:
    with pytest.raises(CellError, match="the date pattern letter 'G' in date_format"):
        engine.query("select date_format(event_time, 'G yyyy') as e from t", {"t": parity_table()})


def test_memory_limit_comes_from_the_session(engine: SqlEngine) -> None:
    assert engine.con.execute("select current_setting('memory_limit')").fetchone()[0] == "256.0 MiB"
