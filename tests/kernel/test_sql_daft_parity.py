"""Spark's own answers (goldens.json) against the cluster path's translation, run by Daft.

Daft runs here in this process with its native runner: the translation and Daft's functions are
the same on Ray (the cluster tests run a few of them there). Each snippet gives exactly Spark's
rows or fails naming what it cannot translate; 90% or more must be identical.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

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
REFUSED = {"from_json_struct": "from_json()", "collect_list_size": "collect_list()",
           "collect_set_sorted": "sort_array()"}


@pytest.fixture(scope="module")
def t() -> object:
    return daft.from_arrow(pa.Table.from_pylist(rows(), pa.schema([(n, getattr(pa, k)()) for n, _, k in SCHEMA])))


@pytest.mark.parametrize("name,sql,ordered", SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_snippet_matches_spark_or_fails_by_name(t: object, name: str, sql: str, ordered: bool) -> None:
    if name in REFUSED:
        with pytest.raises(Untranslatable) as info:
            transpile(sql)
        assert REFUSED[name] in str(info.value) and 'sql.engine = "local"' in str(info.value)
        return
    # as the router calls it: the input's column names and which of them are numbers
    numeric = frozenset(n for n, _, kind in SCHEMA if kind != "string")
    daft_sql, refs = transpile(sql, tuple(n for n, _, _ in SCHEMA), numeric)
    assert set(refs) <= {"t"}
    result = daft.sql(daft_sql, register_globals=False, t=t).to_arrow()
    got = answer(result.column_names, [list(r.values()) for r in result.to_pylist()], ordered)
    assert got == GOLDENS[name], daft_sql


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


def test_a_function_off_the_allowlist_fails_by_name() -> None:
    with pytest.raises(Untranslatable, match=r"levenshtein\(\) is not supported on the cluster"):
        transpile("select levenshtein(name, 'x') as d from t")


def test_division_by_zero_is_null_as_in_spark(t: object) -> None:
    out = daft.sql(transpile("select id / (id - id) as q from t limit 1")[0], register_globals=False, t=t)
    assert out.to_pydict() == {"q": [None]}


def test_columns_match_case_insensitively_as_in_spark(t: object) -> None:
    sql, _ = transpile("select ID, Category from t where AMOUNT > 99 order by Id", ("id", "category", "amount"))
    out = daft.sql(sql, register_globals=False, t=t).to_pydict()
    assert out == {"id": [4, 16, 28], "category": ["c4", "c1", "c3"]}


def test_a_cast_of_text_or_of_unknown_type_truncates_too(t: object) -> None:
    sql = ("select cast(amount as int) as a, cast(cast(amount as string) as int) as b, c from "
           "(select amount, cast(amount as string) as c from t where id = 0)")
    out = daft.sql(transpile(sql, ("amount", "id"), frozenset({"amount", "id"}))[0], register_globals=False, t=t)
    assert out.to_pydict() == {"a": [38], "b": [38], "c": ["38.9"]}
