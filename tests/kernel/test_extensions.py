"""run … as <Extension>: each extension on a small table, the catalog, and the docs listing the same names."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from console.kernel.extensions import catalog
from console.kernel.session import Session

DOCS = Path(__file__).resolve().parents[2] / "docs" / "language.md"


def ok(session: Session, text: str) -> None:
    out = session.run_cell(text)
    assert out.ok, out.error


def test_rate_sampler_splits_within_each_label(session: Session) -> None:
    ok(session, "select x, x % 2 as label from range(100) t(x) as data;\n"
                'train data as RateSampler.`` where labelCol="label" and sampleRate="0.7,0.3" as marked;')
    marked = session.tables["marked"]
    splits = list(zip(marked.column("label").to_pylist(), marked.column("__split__").to_pylist(), strict=True))
    for label in (0, 1):
        assert sum(1 for lab, s in splits if lab == label and s == 0) == 35
        assert sum(1 for lab, s in splits if lab == label and s == 1) == 15


def test_json_expand(session: Session) -> None:
    ok(session, """select '{"name":"Michael"}' as col_1, 1 as id union all
select '{"name":"Andy", "age":30, "address":{"city":"hangzhou"}}' as col_1, 2 as id as t1;
run t1 as JsonExpandExt.`` where inputCol="col_1" and samplingRatio="1.0" as t2;
run t1 as JsonExpandExt.`` where inputCol="col_1" and structColumn="true" as t3;
select t3.col_1.address.city as city from t3 as t4;""")
    assert session.tables["t2"].to_pylist() == [
        {"id": 1, "name": "Michael", "age": None, "address": None},
        {"id": 2, "name": "Andy", "age": 30, "address": {"city": "hangzhou"}}]
    assert session.tables["t4"].column("city").to_pylist() == [None, "hangzhou"]
    out = session.run_cell('select "{oops" as j as bad; run bad as JsonExpandExt.`` where inputCol="j";')
    assert not out.ok and out.error is not None and "row 1 of 'j' is not JSON" in out.error.message


def test_data_summary_and_describe(session: Session) -> None:
    ok(session, "select * from values (1, 'a'), (2, ''), (3, null), (4, 'd') as t(n, s) as data;\n"
                'run data as DataSummary.`` where metrics="mean,median,nullValueRatio,blankValueRatio,75%" as s;\n'
                "run data as Describe.`` as d;")
    summary = {r["columnName"]: r for r in session.tables["s"].to_pylist()}
    assert session.tables["s"].column_names == ["columnName", "mean", "median", "nullValueRatio",
                                                "blankValueRatio", "%75"]
    assert summary["n"]["mean"] == "2.5" and summary["n"]["median"] == "2.5" and summary["n"]["%75"] == "3.25"
    assert summary["s"]["nullValueRatio"] == "0.25" and summary["s"]["blankValueRatio"] == "0.25"
    described = {r["summary"]: r for r in session.tables["d"].to_pylist()}
    assert described["count"] == {"summary": "count", "n": "4", "s": "3"}
    assert described["max"]["n"] == "4"
    out = session.run_cell('run data as DataSummary.`` where metrics="avg";')
    assert not out.ok and out.error is not None and "unknown metric 'avg'" in out.error.message


def test_data_summary_rounds_at_byzers_rountat(session: Session) -> None:
    # Byzer's DataSummary spells the parameter `rountAt`; old scripts use it as written.
    ok(session, "select * from values (1), (1), (2) as t(n) as data;\n"
                'run data as DataSummary.`` where rountAt="4";\n'
                'run data as DataSummary.`` where metrics="mean" and rountAt="4" as s4;\n'
                'run data as DataSummary.`` where metrics="mean" and roundAt="1" as s1;\n'
                'run data as DataSummary.`` where metrics="mean" as s2;')
    assert session.tables["s4"].column("mean").to_pylist() == ["1.3333"]
    assert session.tables["s1"].column("mean").to_pylist() == ["1.3"]
    assert session.tables["s2"].column("mean").to_pylist() == ["1.33"]
    out = session.run_cell('run data as DataSummary.`` where rountAt="four";')
    assert not out.ok and out.error is not None and "rountAt='four' is not a number of decimals" in out.error.message
    out = session.run_cell('run data as DataSummary.`` where roundAt="2" and rountAt="4";')
    assert not out.ok and out.error is not None and "differ" in out.error.message


def test_syntax_analyze_extracts_tables(session: Session) -> None:
    ok(session, """run command as SyntaxAnalyzeExt.`` where action="extractTables" and sql='''
select * from (select * from table1 as c) as d left join table2 as e on d.id=e.id
''' as extracted;""")
    assert session.tables["extracted"].column("tableName").to_pylist() == ["table1", "table2"]


def test_confusion_matrix(session: Session) -> None:
    ok(session, "select * from values (0, 0), (0, 1), (1, 1), (1, 1) as t(label, prediction) as p;\n"
                'run p as ConfusionMatrix.`` where actualCol="label" and predictCol="prediction" as cm;')
    assert session.tables["cm"].to_pylist() == [{"act": "0", "0": 1, "1": 1}, {"act": "1", "0": 0, "1": 2}]


@pytest.mark.parametrize("text, message", [
    ("run data as DataSumary.``;", "unknown extension 'DataSumary'; did you mean DataSummary?"),
    ("run data as Nothing.``;", "unknown extension 'Nothing' (extensions: CacheExt"),
    ("run command as Describe.``;", "Describe needs an input table, not command"),
    ("run data as JsonExpandExt.``;", 'JsonExpandExt needs inputCol="…"'),
])
def test_errors(session: Session, text: str, message: str) -> None:
    ok(session, "select 1 as a as data;")
    out = session.run_cell(text)
    assert not out.ok and out.error is not None and message in out.error.message


def test_catalog_shape_and_docs_list_the_same_names() -> None:
    entries = catalog()
    assert all(set(e) == {"name", "kind", "doc", "params"} for e in entries)
    assert {e["kind"] for e in entries} == {"extension", "algorithm"}
    assert all(set(p) == {"name", "doc"} for e in entries for p in e["params"])
    section = DOCS.read_text(encoding="utf-8").split("## Machine learning and extensions", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| ([A-Z]\w+) \|", section, re.MULTILINE))
    assert documented == {e["name"] for e in entries}
