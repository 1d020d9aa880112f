"""Session behaviour: the Delta round trip of the issue, catalog atomicity, results, settings, include."""
from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from console.kernel.session import Session
from console.wire.cell import Output


def test_parquet_groupby_delta_round_trip_with_versions(session: Session, tmp_path: Path) -> None:
    labels = pa.array([i % 10 for i in range(1000)], pa.int64())
    pq.write_table(pa.table({"image": [[i, i] for i in range(1000)], "label": labels}), tmp_path / "mnist.parquet")
    out = session.run_cell(f"""load parquet.`{tmp_path}/mnist.parquet` as mnist;
select label, count(*) as n from mnist group by label order by label as c;
save overwrite c as delta.`ai_model.counts`;
load delta.`ai_model.counts` as c2;""")
    assert out.ok, out.error
    assert session.tables["c2"].sort_by("label").equals(session.tables["c"])
    assert (tmp_path / "data" / "lake" / "ai_model" / "counts" / "_delta_log").is_dir()
    out = session.run_cell("""select label, n * 2 as n from c as doubled;
save overwrite doubled as delta.`ai_model.counts`;
load delta.`ai_model.counts` where versionAsOf="1" as v1;
load delta.`ai_model.counts` where versionAsOf="0" as v0;""")
    assert out.ok, out.error
    assert session.tables["v1"].sort_by("label").equals(session.tables["doubled"])
    assert session.tables["v0"].sort_by("label").equals(session.tables["c"])


def test_failed_statement_keeps_earlier_tables(session: Session) -> None:
    assert session.run_cell("select 1 as a as t;").ok
    t = session.tables["t"]
    out = session.run_cell("select 2 as a as t2;\nselect nope from t as t;")
    assert not out.ok and out.error is not None and out.error.kind == "sql" and out.error.line == 2
    assert session.tables["t"] is t and "t2" in session.tables
    assert out.tables_changed == ["t2"]


def test_result_is_last_table_head_with_types(session: Session) -> None:
    session.cfg = dataclasses.replace(session.cfg, RESULT_ROWS=3)
    out = session.run_cell("select id, cast('Infinity' as double) as inf, date'2024-01-02' as d, "
                           "cast('abc' as binary) as b, array(1, 2) as arr from range(5) t(id) as r;")
    assert out.ok and out.result is not None
    assert out.result.total_rows == 5 and len(out.result.rows) == 3
    assert [c["name"] for c in out.result.columns] == ["id", "inf", "d", "b", "arr"]
    assert out.result.columns[0]["type"] == "bigint"  # Spark's name (console/coltypes.py)
    assert out.result.rows[1] == [1, {"$": "float", "text": "Infinity"}, "2024-01-02",
                                  {"$": "binary", "size": 3, "base64": "YWJj"}, [1, 2]]


def test_python_settings_persist_and_replace(session: Session) -> None:
    assert session.run_cell('!python conf "schema=file"; !python env "A=1";').ok
    out = session.run_cell('!python conf "schema=st(field(a,long))";')
    assert session.python_conf == {"schema": "st(field(a,long))"} and session.python_env == {"A": "1"}
    assert out.result is not None and out.result.rows == [["schema", "st(field(a,long))"]]


def test_variables_persist_between_cells(session: Session) -> None:
    assert session.run_cell('set x = "5";').ok
    out = session.run_cell("select ${x} as v as t;")
    assert out.ok and out.result is not None and out.result.rows == [[5]]


def test_save_emits_a_system_line(session: Session, events: list[Any]) -> None:
    assert session.run_cell("select 1 as a as t; save overwrite t as parquet.`out/t`;").ok
    assert any(isinstance(e, Output) and e.stream == "system" and "parquet.`out/t`" in e.text for e in events)


def test_include_through_loader_and_cycles(tmp_path: Path) -> None:
    from console.config import load_config

    notebooks = {"lib": [("mlsql", "select 1 as one as one;"), ("markdown", "# x"),
                         ("mlsql", "select 2 as two as two;")],
                 "loop": [("mlsql", "include notebook.`loop`;")],
                 "bad": [("mlsql", "select 1 as a as t;\nselect zz from t as u;")]}
    s = Session(load_config({"DATA_DIR": str(tmp_path)}), notebook_loader=lambda name: notebooks[name])
    out = s.run_cell("include notebook.`lib`;")
    assert out.ok and set(s.tables) == {"one", "two"}
    out = s.run_cell("include notebook.`loop`;")
    assert out.error is not None and "include cycle: loop -> loop" in out.error.message
    out = s.run_cell("\ninclude notebook.`bad#1`;")
    assert out.error is not None and out.error.line == 2
    assert out.error.message.startswith("in bad#1, line 2, column 8: Binder Error")
    out = s.run_cell("include notebook.`missing`;")
    assert out.error is not None and out.error.message.startswith("cannot include notebook 'missing'")


def test_table_names_are_case_insensitive_in_sql(session: Session) -> None:
    assert session.run_cell("select 1 as a as MyTable;").ok
    out = session.run_cell("select a from mytable as t;")
    assert out.ok, out.error


def test_unexpected_failure_is_reported_with_an_id_and_logged_not_raised(
        session: Session, monkeypatch: Any, caplog: pytest.LogCaptureFixture) -> None:
    def boom(*args: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(session, "_run_select", boom)
    with caplog.at_level(logging.ERROR, logger="console.kernel"):
        out = session.run_cell("select 1 as a as t;")
    assert out.error is not None and out.error.kind == "kernel"
    # The user gets the id only; the log has the traceback under that id.
    match = re.fullmatch(r"internal error ([0-9a-f]{8}); see the server log", out.error.message)
    assert match, out.error.message
    assert "boom" not in out.error.message and out.error.traceback == ""
    logged = [r for r in caplog.records if match.group(1) in r.getMessage()]
    assert logged and logged[0].exc_info is not None and "RuntimeError: boom" in caplog.text
    assert "Traceback" in caplog.text
    monkeypatch.undo()
    assert session.run_cell("select 2 as b as u;").ok  # the session goes on


def test_an_interrupt_before_the_query_starts_is_not_lost(session: Session) -> None:
    """An interrupt that comes while the statement is still being read or translated (DuckDB runs
    nothing yet, so its own interrupt is a no-op) stops the query as it would have started."""
    from console.kernel.errors import CellError

    engine = session.sql
    engine.begin()
    engine.interrupt()  # the cell's interrupt, in the gap before the query
    with pytest.raises(CellError) as info:
        engine.query("select count(*) as n from range(100000000) a(x), range(1000) b(y) where x % 7 = y % 3", {})
    assert info.value.kind == "interrupted"
    assert session.run_cell("select 1 as a as t;").ok  # the next cell begins afresh


def test_interrupt_stops_a_running_query_and_the_cell(session: Session) -> None:
    import threading

    threading.Timer(0.3, session.interrupt).start()
    out = session.run_cell("select count(*) as n from range(100000000) a(x), range(1000) b(y) "
                           "where x % 7 = y % 3 as slow;\nselect 1 as a as after;")
    assert out.error is not None and out.error.kind == "interrupted"
    assert "slow" not in session.tables and "after" not in session.tables
    assert session.run_cell("select 1 as a as t;").ok


def test_bare_variables_as_values_and_cache_inside_data_roots(tmp_path: Path) -> None:
    from console.config import load_config

    outside = tmp_path / "allowed"
    outside.mkdir()
    s = Session(load_config({"DATA_DIR": str(tmp_path / "data"), "DATA_ROOTS": [str(outside)]}))
    assert s.run_cell('set b = "4"; set a = ${b}; select ${a} as n as t;').ok
    assert s.variables["a"] == "4"
    assert s.run_cell("save overwrite t as parquet.`${__cache_dir__}/t`;").ok  # under the data dir
    out = s.run_cell(f"save overwrite t as parquet.`{tmp_path}/elsewhere`;")
    assert out.error is not None and "outside the allowed data roots" in out.error.message
