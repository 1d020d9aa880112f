"""Byzer `!` commands on a real Session: show/desc/println, asserts, !if, macros, cache, repartition, delta."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from console.kernel.session import Session
from console.protocols import CellOutcome
from console.wire.cell import Output


def ok(session: Session, source: str) -> CellOutcome:
    out = session.run_cell(source, cell=1)
    assert out.ok, out.error
    return out


def failed(session: Session, source: str) -> Any:
    out = session.run_cell(source, cell=1)
    assert not out.ok and out.error is not None
    return out.error


def rows(out: CellOutcome) -> list[list[Any]]:
    assert out.result is not None
    return out.result.rows


def printed(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, Output))


def test_show_tables_desc_and_variables(session: Session) -> None:
    ok(session, "select 1 as a, 'x' as b as t; set greeting = 'hi';")
    out = ok(session, "!show tables;")
    assert out.result is not None and out.result.name == "tables"
    assert rows(out) == [["t", 1, "a int32, b string"]]
    assert "tables" not in session.tables  # shown, not put in the catalog
    assert rows(ok(session, "!desc t;")) == [["a", "int", True], ["b", "string", True]]
    variables = {r[0]: r[1:] for r in rows(ok(session, "!show variables;"))}
    assert variables["greeting"] == ["hi", "set"] and variables["today"][1] == "built-in"
    assert ["csv"] in rows(ok(session, "!show datasources;")) and ["jsonStr"] in rows(ok(session, "!show datasources;"))
    names = [r[0] for r in rows(ok(session, "!show commands;"))]
    assert {"!show", "!if", "!fs", "!hdfs", "!assertNotNullThrow"} <= set(names)
    assert rows(ok(session, '!show "function/abs";'))[0][0] == "abs"
    err = failed(session, "!show nonsense;")
    assert "tables" in err.message and err.column == 7


def test_show_et_lists_the_catalog(session: Session) -> None:
    from console.kernel import extensions

    catalog = getattr(extensions, "catalog", None)
    if catalog is None:
        err = failed(session, "!show et;")
        assert "not available" in err.message
        return
    names = [r[0] for r in rows(ok(session, "!show et;"))]
    assert names == [e["name"] for e in catalog()]
    first = catalog()[0]
    params = rows(ok(session, f'!show "et/{first["name"]}";'))
    assert [p[0] for p in params] == [p["name"] for p in first["params"]]
    err = failed(session, f"!show et/{first['name'][:-1]}x;")
    assert "did you mean" in err.message


def test_println_last_command_and_empty_table(session: Session, events: list[Any]) -> None:
    ok(session, "set n = '3'; !println '''rows: ${n}''';")
    assert printed(events) == "rows: 3\n"
    ok(session, "select 7 as x as seven; !desc seven; !lastCommand named seven_cols;")
    assert session.tables["seven_cols"].column("col_name").to_pylist() == ["x"]
    out = ok(session, "select 1 as a as z; !emptyTable;")
    assert out.result is None and "z" in session.tables
    ok(session, "select 1 as a as named_one; !lastTableName; select '${__last_table_name__}' as n as o;")
    assert session.tables["o"].column("n").to_pylist() == ["named_one"]
    assert "no statement before" in failed(session, "!lastCommand named x;").message


def test_assert_passes_or_fails_with_the_message(session: Session) -> None:
    ok(session, "select count(*) as v from range(3) t(id) as c; !assert c ''' :v > 0 ''' \"not empty\";")
    err = failed(session, "select * from range(4) t(v) as c4;\n!assert c4 ''' :v >= 2 ''' \"v too small\";")
    assert err.kind == "data" and err.line == 2
    assert err.message.startswith("v too small") and "2 of 4 rows of c4" in err.message
    err = failed(session, "!assert c ''' :nope > 0 ''' \"m\";")
    assert "no column nope" in err.message and "v" in err.message
    err = failed(session, "!assert inputTable in __set__ ''' inputTable is missing ''';")
    assert err.message == "inputTable is missing"
    ok(session, "set inputTable = 'abc'; !assert inputTable in __set__ 'missing';")
    # A null result of the expression counts as not satisfied, as in a where clause.
    assert "1 of 1" in failed(session, "select cast(null as int) as v as n1; !assert n1 ''':v > 0''' 'x';").message


def test_byzer_quality_asserts(session: Session) -> None:
    ok(session, "select * from (values (1, 'a', null), (1, 'b', 2), (3, 'b', 4)) x(id, k, z) as t;")
    assert rows(ok(session, "!assertNotNull t 'z';")) == [[1, "a", None]]
    assert rows(ok(session, "!assertUniqueKey t 'id,k';")) == [["id", 1], ["k", 1]]
    assert rows(ok(session, "!assertUniqueKeys t 'id,k';")) == []
    assert rows(ok(session, "!assertCondition t 'id > 1';")) == [[1, "a", None], [1, "b", 2]]
    assert "1 rows with nulls in z" in failed(session, "!assertNotNullThrow t 'z';").message
    assert "not unique: id" in failed(session, "!assertUniqueKeyThrow t 'id';").message
    ok(session, "!assertUniqueKeysThrow t 'id,k'; !assertConditionThrow t 'id >= 1';")
    assert "no column q" in failed(session, "!assertNotNull t 'q';").message
    err = failed(session, '!throw "stop here";')
    assert (err.kind, err.message) == ("data", "stop here")


BRANCH = """set a = "{value}";
!if ''' split(:a, ",")[0] == "jack" ''';
   select 1 as a as b;
!elif ''' :a == "x" ''';
   select 2 as a as b;
!else;
   select 3 as a as b;
!fi;
select * from b as output;"""


@pytest.mark.parametrize(("value", "expected"), [("jack,1", 1), ("x", 2), ("wow,jack", 3)])
def test_if_elif_else(session: Session, value: str, expected: int) -> None:
    assert rows(ok(session, BRANCH.format(value=value))) == [[expected]]


def test_nested_if_binds_placeholders_for_the_block(session: Session, events: list[Any]) -> None:
    out = ok(session, """set a = "jack,2";
!if ''' select split(:a, ",")[0] as :name, split(:a, ",")[1] as :num;
:name == "jack" and :num == 3 ''';
    select 0 as a as b;
!elif ''' select split(:a, ",")[1] as :num; :num == 2 ''';
    !if ''' 2 == 1 ''';
       select 11 as a as b;
    !else;
       !println '''num is ${num}''';
       select 12 as a as b;
    !fi;
!else;
    select 2 as a as b;
!fi;
select * from b as output;""")
    assert rows(out) == [[12]]
    assert printed(events) == "num is 2\n"
    assert "num" not in session.variables and "name" not in session.variables  # undone at !fi


def test_if_in_a_branch_not_taken_is_not_evaluated(session: Session) -> None:
    # The inner condition names a variable nobody set: evaluating it would fail.
    out = ok(session, """!if ''' 1 == 2 ''';
  !if ''' :never_set == 1 ''';
    select 1 as a as b;
  !fi;
  select 2 as a as b;
!else;
  select 3 as a as b;
!fi;""")
    assert rows(out) == [[3]]


def test_flow_errors(session: Session) -> None:
    err = failed(session, "!if ''' 1 = 1 ''';\n!fi;\n!fi;")
    assert err.line == 3 and "without an open !if" in err.message
    err = failed(session, "!if ''' :nosuch == 1 ''';\n!fi;")
    assert "unknown variable :nosuch" in err.message and err.column == 9
    err = failed(session, "!if ''' 1 + 1 ''';\n!fi;")
    assert "must be true or false" in err.message
    assert "!elif after !else" in failed(session, "!if '''1=1''';\n!else;\n!elif '''1=1''';\n!fi;").message
    # An !if left open at the end of a cell is an error at its line, and does not reach the next cell.
    err = failed(session, "select 0 as z as before;\n!if ''' 1 = 2 ''';\nselect 1 as a as open_if;")
    assert err.line == 2 and "has no !fi" in err.message
    ok(session, "select 1 as a as after_open;")
    assert "after_open" in session.tables and "open_if" not in session.tables


def test_macros_positional_and_named(session: Session) -> None:
    out = ok(session, "set make = '''select {0} as n as {1}'''; !make 42 answer; select * from answer as o;")
    assert rows(out) == [[42]]
    ok(session, "set twice = '''select {0} * 2 as n as doubled'''; !twice \"21\";")
    assert session.tables["doubled"].column("n").to_pylist() == [42]
    err = failed(session, "!make 1;")
    assert "{1}" in err.message and "1 argument" in err.message
    err = failed(session, "set broken = '''select nope from nowhere as x''';\n!broken;")
    assert err.line == 2 and "macro !broken, line 1" in err.message
    err = failed(session, "set loop = '''!loop'''; !loop;")
    assert "nested more than" in err.message


def test_unknown_and_unavailable_commands(session: Session) -> None:
    err = failed(session, "select 1 as a as t;\n!shw tables;")
    assert err.kind == "parse" and err.line == 2
    assert "unknown command !shw (did you mean !show?)" in err.message and "!assertCondition" in err.message
    assert "did you mean" not in failed(session, "!zzzzqqq;").message
    assert "plugins are not available in MLSQL Console" in failed(session, "!plugin app add - 'x';").message
    assert "plugins are not available" in failed(session, "!byzerllm setup;").message


def test_cache_writes_the_session_cache_and_uncache_removes_it(session: Session) -> None:
    import pyarrow.parquet as pq

    ok(session, "select * from range(5) t(id) as t;")
    out = ok(session, "!cache t session;")
    assert rows(out)[0][2] == "cache:tables/t.parquet"  # the server's folder is never shown
    path = session.cache_dir / "tables" / "t.parquet"
    assert pq.read_table(path).column("id").to_pylist() == list(range(5))
    ok(session, "load parquet.`${__cache_dir__}/tables/t.parquet` as back;")
    assert session.tables["back"].num_rows == 5
    ok(session, "!uncache t;")
    assert not path.exists()
    assert "not cached" in failed(session, "!uncache t;").message
    assert "script|session" in failed(session, "!cache t forever;").message


def test_table_repartition_and_run_script(session: Session) -> None:
    ok(session, "select * from range(10) t(id) as t; !tableRepartition _ -i t -num 3 -o t3;")
    assert session.partitions["t3"] == 3 and session.tables["t3"] is session.tables["t"]
    ok(session, "!tableRepartition t 2;")
    assert session.partitions["t"] == 2
    assert "whole number" in failed(session, "!tableRepartition _ -i t -num x -o y;").message
    out = ok(session, "!runScript ''' select 5 as a as b; ''' named five;")
    assert rows(out) == [[5]] and "five" in session.tables


def test_delta_history_info_compact_vacuum(session: Session) -> None:
    ok(session, "select * from range(3) t(id) as t;\n"
                "save overwrite t as delta.`db.t1`;\nsave append t as delta.`db.t1`;")
    history = rows(ok(session, "!delta history db.t1;"))
    assert [(h[0], h[2]) for h in history] == [(1, "WRITE"), (0, "WRITE")]
    info = dict((r[0], r[1]) for r in rows(ok(session, "!delta info db.t1;")))
    assert info["version"] == "1" and info["files"] == "2" and info["schema"] == "id bigint"
    metrics = dict((r[0], r[1]) for r in rows(ok(session, "!delta compact db.t1;")))
    assert metrics["numFilesRemoved"] == "2" and metrics["numFilesAdded"] == "1"
    ok(session, "!delta vacuum db.t1;")
    assert rows(ok(session, "!delta show tables;"))[0][0] == "db.t1"
    ok(session, "load delta.`db.t1` as back;")
    assert sorted(session.tables["back"].column("id").to_pylist()) == [0, 0, 1, 1, 2, 2]
    err = failed(session, "!delta history db.nope;")
    assert "does not exist" in err.message


def test_docs_list_every_command_with_an_example() -> None:
    import re

    from console.kernel.commands import command_names

    text = (Path(__file__).resolve().parents[2] / "docs" / "language.md").read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    documented: set[str] = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `!") and len(cells) == 3:
            names = re.findall(r"`!(\w+)`", cells[0])
            assert cells[2].startswith("`!") or cells[2].startswith("`"), line  # an example for each row
            documented.update(names)
    assert documented == set(command_names())
