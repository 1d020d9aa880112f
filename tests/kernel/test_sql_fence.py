"""MLSQL cells stay inside the lake, the session's cache and CONSOLE_DATA_ROOTS: DuckDB's file access
(read_text, read_csv, COPY, ATTACH, EXPORT, extensions) and its locked configuration, and the
engine's load/save/jdbc/shell paths, never the server's data folder (issue 11 §1)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from console.config import load_config
from console.kernel.session import Session
from console.kernel.sql import SqlEngine

SECRET = "cookie-signing-key"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "console.db") as db:
        db.executescript("create table shares(notebook text, user text, role text);"
                         "insert into shares values ('nb1', 'alice', 'owner');")
    (data / "secret_key").write_text(SECRET)
    (data / "dummy.txt").write_text("keep me\n")
    return data


def _session(data: Path, **settings: object) -> Session:
    return Session(load_config({"DATA_DIR": str(data), **settings}), session_id="nb-1")


@pytest.fixture
def session(data: Path) -> Session:
    s = _session(data)
    yield s
    s.shutdown()


def _error(s: Session, source: str) -> str:
    out = s.run_cell(source)
    assert not out.ok and out.error is not None, source
    return out.error.message


def _shares(data: Path) -> list[tuple[str, ...]]:
    with sqlite3.connect(data / "console.db") as db:
        return list(db.execute("select * from shares"))


def test_issue_reproductions_are_refused_and_the_store_is_unchanged(session: Session, data: Path) -> None:
    before = _shares(data)
    assert _error(session, "load binaryFile.`console.db` as a;").startswith("path console.db does not exist: ")
    assert _error(session, "load text.`secret_key` as b;").startswith("path secret_key does not exist: ")
    assert "inside the server's private data folder" in _error(session, "load text.`../secret_key` as b;")
    assert session.run_cell("select 'nb2' as notebook, 'mallory' as user, 'owner' as role as s;").ok
    message = _error(session, f'save append s as jdbc.`shares` where url="sqlite:///{data}/console.db";')
    # What the user sees names no folder of the server (console/sources/paths.py scrub).
    assert message.startswith("path <server path> is inside the server's private data folder; ")
    assert str(data) not in message
    assert _shares(data) == before
    assert session.run_cell("save overwrite s as csv.`dummy.txt`;").ok  # into the lake, not over the file
    assert (data / "dummy.txt").read_text() == "keep me\n" and (data / "lake" / "dummy.txt").is_dir()
    assert (data / "secret_key").read_text() == SECRET
    assert "a" not in session.tables and "b" not in session.tables


@pytest.mark.parametrize("sql", ["select * from read_text('/etc/passwd') as t;",
                                 "select * from read_csv('{data}/console.db') as t;",
                                 "select * from read_blob('{data}/secret_key') as t;",
                                 "select * from read_parquet('{data}/*') as t;",
                                 "select * from read_text('{data}/lake/../secret_key') as t;"])
def test_sql_cannot_read_files_outside_the_roots(session: Session, data: Path, sql: str) -> None:
    message = _error(session, sql.format(data=data))
    assert message.startswith("Permission Error: Cannot access file")
    assert "SQL reads and writes files only inside lake:, cache: (use load for other data)" in message
    assert str(data) not in message  # the server's folder is never shown (console/sources/paths.py scrub)
    assert SECRET not in message


def test_sql_still_reads_the_catalog_and_files_in_the_lake(session: Session, data: Path) -> None:
    assert session.run_cell("select 1 as a union all select 2 as a as t;\n"
                            "select sum(a) as n from t as total;\n"
                            "save overwrite t as csv.`t_csv` where header=\"true\";").ok
    assert session.tables["total"].to_pydict() == {"n": [3]}
    out = session.run_cell(f"select count(*) as n from read_csv('{data}/lake/t_csv/*.csv') as back;")
    assert out.ok, out.error
    assert session.tables["back"].to_pydict() == {"n": [2]}


def test_sql_reads_inside_the_data_roots(data: Path, tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "x.csv").write_text("a\n1\n")
    (tmp_path / "other.csv").write_text("a\n2\n")
    s = _session(data, DATA_ROOTS=[str(allowed)])
    try:
        assert s.run_cell(f"select * from read_csv('{allowed}/x.csv') as t;").ok
        assert "Permission Error" in _error(s, f"select * from read_csv('{tmp_path}/other.csv') as t;")
    finally:
        s.shutdown()


@pytest.mark.parametrize("statement", ["SET enable_external_access = true",
                                       "SET allowed_directories = ['/']", "SET lock_configuration = false",
                                       "SET allowed_configs = ['enable_external_access']",
                                       "SET temp_directory = '/tmp'"])
def test_the_configuration_is_locked(session: Session, statement: str) -> None:
    message = _error(session, f'set v = "{statement}" where type="sql";')
    assert "the configuration has been locked" in message and "notebooks may change only threads" in message
    assert "Permission Error" in _error(session, "select * from read_text('/etc/passwd') as t;")


def test_conf_settings_tune_but_do_not_unlock(session: Session) -> None:
    assert session.run_cell('set duckdb.threads = "1" where type="conf";').ok
    assert session.run_cell("select current_setting('threads') as n as t;").ok
    assert session.tables["t"].to_pydict() == {"n": [1]}
    message = _error(session, 'set duckdb.enable_external_access = "true" where type="conf";')
    assert message.startswith("cannot set duckdb.enable_external_access: notebooks may change only threads")


@pytest.mark.parametrize("statement", ["ATTACH '{tmp}/other.db' AS o", "INSTALL httpfs", "LOAD httpfs",
                                       "COPY (SELECT 1 AS a) TO '{tmp}/x.csv'", "EXPORT DATABASE '{tmp}/exp'",
                                       "SELECT * FROM read_text('/etc/passwd')", "SELECT * FROM glob('/etc/*')",
                                       "RESET enable_external_access", "RESET allowed_directories"])
def test_the_engine_refuses_file_statements_at_the_duckdb_level(data: Path, tmp_path: Path, statement: str) -> None:
    # Straight to DuckDB, past the transpiler: the wall is DuckDB's own, not the Spark SQL parser's.
    import duckdb

    engine = SqlEngine([data / "lake"])
    try:
        with pytest.raises(duckdb.Error, match="Permission Error|disabled|configuration has been locked"):
            engine.con.execute(statement.format(tmp=tmp_path))
    finally:
        engine.close()
    assert not (tmp_path / "other.db").exists() and not (tmp_path / "x.csv").exists()
    assert not (tmp_path / "exp").exists()


def test_a_copy_into_the_lake_works_at_the_duckdb_level(data: Path) -> None:
    (data / "lake").mkdir()
    engine = SqlEngine([data / "lake"])
    try:
        engine.con.execute(f"COPY (SELECT 1 AS a) TO '{data}/lake/x.csv'")
    finally:
        engine.close()
    assert (data / "lake" / "x.csv").read_text().splitlines() == ["a", "1"]


def test_shell_commands_start_in_the_lake(session: Session, data: Path) -> None:
    assert session.run_cell('set here = `pwd` where type="shell";').ok
    assert session.variables["here"] == str(data / "lake")
    assert "No such file" in _error(session, 'set k = `cat secret_key` where type="shell";')
