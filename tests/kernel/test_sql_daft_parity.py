"""Spark's own answers (goldens.json) against the cluster path's translation, run by Daft.

Daft runs here in this process with its native runner: the translation and Daft's functions are
the same on Ray (the cluster tests run a few of them there), and so are the DuckDB functions the
translation hands Daft (daft_udf.py). Each snippet gives exactly Spark's rows or fails naming
what it cannot translate; 90% or more must be identical.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from console.kernel.sqlengines import daft_udf
from console.kernel.sqlengines.daft import transpile
from console.kernel.sqlengines.spark import Untranslatable
from tests.kernel.spark_parity.compare import answer
from tests.kernel.spark_parity.data import SCHEMA, rows
from tests.kernel.spark_parity.snippets import SNIPPETS

daft = pytest.importorskip("daft")  # installed by `make setup` beside the pinned set (docs/cluster-sql.md)
os.environ.setdefault("DAFT_ANALYTICS_ENABLED", "0")
os.environ.setdefault("DAFT_PROGRESS_BAR", "0")

GOLDENS = json.loads((Path(__file__).parent / "spark_parity" / "goldens.json").read_text())
# Refused by name on the cluster, with why.
REFUSED: dict[str, str] = {}
T_SCHEMA = pa.schema([(n, getattr(pa, k)()) for n, _, k in SCHEMA])


@pytest.fixture(scope="module")
def t() -> object:
    return daft.from_arrow(pa.Table.from_pylist(rows(), T_SCHEMA))


def run(sql: str, t: object, columns: tuple[str, ...] = (), numeric: frozenset[str] = frozenset()) -> object:
    """The select's Daft DataFrame, as the driver makes it (daft_run.py): its DuckDB functions
    attached and its VALUES made, over the table t."""
    plan = transpile(sql, columns, numeric, (("t", T_SCHEMA),))
    daft_udf.attach(plan.functions)
    return daft.sql(plan.sql, register_globals=False, t=t, **daft_udf.inline_tables(plan.values))


@pytest.mark.parametrize("name,sql,ordered", SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_snippet_matches_spark_or_fails_by_name(t: object, name: str, sql: str, ordered: bool) -> None:
    if name in REFUSED:
        with pytest.raises(Untranslatable) as info:
            transpile(sql)
        assert REFUSED[name] in str(info.value) and 'sql.engine = "local"' in str(info.value)
        return
    # as the router calls it: the input's column names and which of them are numbers
    numeric = frozenset(n for n, _, kind in SCHEMA if kind != "string")
    columns = tuple(n for n, _, _ in SCHEMA)
    assert set(transpile(sql, columns, numeric, (("t", T_SCHEMA),)).refs) <= {"t"}
    result = run(sql, t, columns, numeric).to_arrow()  # type: ignore[attr-defined]
    got = answer(result.column_names, [list(r.values()) for r in result.to_pylist()], ordered)
    assert got == GOLDENS[name], transpile(sql, columns, numeric, (("t", T_SCHEMA),)).sql


def test_parity_share() -> None:
    assert (len(SNIPPETS) - len(REFUSED)) / len(SNIPPETS) >= 0.9


@pytest.mark.parametrize("sql,named", [
    ("select * from read_parquet('/etc')", "read_parquet"),
    ("select url_download(url) as b from t", "url_download()"),
    ("select image_file(url) as f from t", "image_file()"),
    ("select read_csv('/etc/passwd') as x from t", "read_csv()"),
    ("select * from range(10)", "table function range"),
])
def test_files_and_urls_are_refused(sql: str, named: str) -> None:
    with pytest.raises(Untranslatable) as info:
        transpile(sql)
    assert named in str(info.value)


def test_what_neither_engine_can_run_fails_by_name() -> None:
    with pytest.raises(Untranslatable, match=r"SOUNDEX is not supported on the cluster"):
        transpile("select soundex(name) as d from t", (), frozenset(), (("t", T_SCHEMA),))


def test_what_daft_lacks_duckdb_computes_inside_daft(t: object) -> None:
    """A function Daft lacks (levenshtein), an aggregate it lacks (percentile) and a function over an
    aggregate: the local engine's translation, run by DuckDB over Daft's batches and groups."""
    sql = ("select category, levenshtein(max(name), 'x') as d, percentile(amount, 0.5) as p "
           "from t where levenshtein(category, 'c1') = 0 group by category")
    plan = transpile(sql, (), frozenset(), (("t", T_SCHEMA),))
    assert "LEVENSHTEIN" not in plan.sql.upper() and len(plan.functions) == 3
    out = run(sql, t).to_pydict()  # type: ignore[attr-defined]
    assert out["category"] == ["c1"] and out["d"][0] >= 0 and out["p"][0] is not None


def test_division_by_zero_is_null_as_in_spark(t: object) -> None:
    out = run("select id / (id - id) as q from t limit 1", t)
    assert out.to_pydict() == {"q": [None]}  # type: ignore[attr-defined]


def test_columns_match_case_insensitively_as_in_spark(t: object) -> None:
    out = run("select ID, Category from t where AMOUNT > 99 order by Id", t, ("id", "category", "amount"))
    assert out.to_pydict() == {"id": [4, 16, 28], "category": ["c4", "c1", "c3"]}  # type: ignore[attr-defined]


def test_a_cast_of_text_or_of_unknown_type_truncates_too(t: object) -> None:
    sql = ("select cast(amount as int) as a, cast(cast(amount as string) as int) as b, c from "
           "(select amount, cast(amount as string) as c from t where id = 0)")
    out = run(sql, t, ("amount", "id"), frozenset({"amount", "id"}))
    assert out.to_pydict() == {"a": [38], "b": [38], "c": ["38.9"]}  # type: ignore[attr-defined]
