"""jdbc through SQLAlchemy: connections by alias, url options, directQuery, save modes; SQLite and PostgreSQL."""
from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from console.sources import SourceContext, SourceError, get_source
from console.sources.jdbc import sqlalchemy_url


@pytest.fixture
def sqlite_ctx(ctx: SourceContext, tmp_path: Path) -> SourceContext:
    db = tmp_path / "shop.db"
    con = sqlite3.connect(db)
    con.executescript("create table items(id integer primary key, name text, price real);"
                      "insert into items values (1, 'pen', 1.5), (2, 'ink', null), (3, 'pad', 4.0);")
    con.commit()
    con.close()
    ctx.connections["shop"] = {"url": f"sqlite:///{db}", "driver": "org.sqlite.JDBC"}
    return ctx


@pytest.fixture
def jdbc():
    return get_source("jdbc")


def test_load_by_alias_and_table(sqlite_ctx: SourceContext, jdbc) -> None:
    t = jdbc.read(sqlite_ctx, "shop.items", {})
    assert t.to_pydict() == {"id": [1, 2, 3], "name": ["pen", "ink", "pad"], "price": [1.5, None, 4.0]}
    assert t.schema.field("id").type == pa.int64()


def test_direct_query(sqlite_ctx: SourceContext, jdbc) -> None:
    t = jdbc.read(sqlite_ctx, "shop.items", {"directQuery": "select count(*) as n from items where price > 1"})
    assert t.to_pydict() == {"n": [2]}


def test_url_option_with_a_plain_table_name(sqlite_ctx: SourceContext, jdbc, tmp_path: Path) -> None:
    url = sqlite_ctx.connections["shop"]["url"]
    elsewhere = SourceContext(data_dir=tmp_path / "data")
    assert jdbc.read(elsewhere, "items", {"url": url}).num_rows == 3
    jdbc_url = f"jdbc:sqlite:{tmp_path / 'shop.db'}"
    assert jdbc.read(elsewhere, "items", {"url": jdbc_url}).num_rows == 3


def test_jdbc_urls_map_to_sqlalchemy_dialects() -> None:
    url = sqlalchemy_url("jdbc:postgresql://db.example:5433/sales?ssl=true", {"user": "ann", "password": "pw"})
    assert url.render_as_string(hide_password=False) == "postgresql+psycopg://ann:pw@db.example:5433/sales"
    with pytest.raises(SourceError, match="option url 'nonsense' is not a valid database URL"):
        sqlalchemy_url("nonsense", {})


def test_unknown_alias_and_missing_table(sqlite_ctx: SourceContext, jdbc) -> None:
    with pytest.raises(SourceError, match="no connection named 'warehouse'"):
        jdbc.read(sqlite_ctx, "warehouse.items", {})
    with pytest.raises(SourceError, match="table nothing does not exist"):
        jdbc.read(sqlite_ctx, "shop.nothing", {})
    with pytest.raises(SourceError, match="cannot load jdbc shop.items: no such table: nope"):
        jdbc.read(sqlite_ctx, "shop.items", {"directQuery": "select * from nope"})


def test_save_modes_round_trip(sqlite_ctx: SourceContext, jdbc, people: pa.Table, rows) -> None:
    jdbc.write(sqlite_ctx, people, "shop.people", "errorIfExists", {}, [])
    assert rows(jdbc.read(sqlite_ctx, "shop.people", {})) == rows(people)
    with pytest.raises(SourceError) as err:
        jdbc.write(sqlite_ctx, people, "shop.people", "errorifexists", {}, [])
    assert err.value.message == ("table people already exists; use `save overwrite` to replace it "
                                 "or `save append` to add to it")
    jdbc.write(sqlite_ctx, people.slice(0, 1), "shop.people", "ignore", {}, [])
    assert jdbc.read(sqlite_ctx, "shop.people", {}).num_rows == 4
    jdbc.write(sqlite_ctx, people, "shop.people", "append", {}, [])
    assert jdbc.read(sqlite_ctx, "shop.people", {}).num_rows == 8
    jdbc.write(sqlite_ctx, pa.table({"x": ["only"]}), "shop.people", "overwrite", {}, [])
    assert jdbc.read(sqlite_ctx, "shop.people", {}).to_pydict() == {"x": ["only"]}


def test_append_with_other_columns_shows_both(sqlite_ctx: SourceContext, jdbc) -> None:
    with pytest.raises(SourceError) as err:
        jdbc.write(sqlite_ctx, pa.table({"id": [9], "colour": ["red"]}), "shop.items", "append", {}, [])
    assert err.value.message.startswith("cannot append to table items: the schemas differ\n"
                                        "  existing: id int64, name string, price double\n")


def test_failed_overwrite_keeps_the_old_table(sqlite_ctx: SourceContext, jdbc, monkeypatch) -> None:
    from console.sources import jdbc as jdbc_module

    def boom(self, conn, target, table):
        conn.execute(target.insert(), [{"x": "partial"}])
        raise RuntimeError("connection lost")

    monkeypatch.setattr(jdbc_module.JdbcSource, "_insert", boom)
    with pytest.raises(RuntimeError):
        jdbc.write(sqlite_ctx, pa.table({"x": ["new"]}), "shop.items", "overwrite", {}, [])
    monkeypatch.undo()
    assert jdbc.read(sqlite_ctx, "shop.items", {}).num_rows == 3
    db = sqlite3.connect(sqlite_ctx.connections["shop"]["url"][len("sqlite:///"):])
    names = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
    assert names == ["items"]  # the half-filled new table was rolled back


def test_types_survive(sqlite_ctx: SourceContext, jdbc) -> None:
    t = pa.table({"b": [True, None], "i": pa.array([1, 2], pa.int32()), "d": [dt.date(2024, 5, 1), None],
                  "ts": [dt.datetime(2024, 5, 1, 12, 30), None], "bin": [b"\x00", None], "l": [[1, 2], None]})
    jdbc.write(sqlite_ctx, t, "shop.typed", "overwrite", {}, [])
    back = jdbc.read(sqlite_ctx, "shop.typed", {})
    assert back.column("b").to_pylist() == [True, None]
    assert back.column("i").to_pylist() == [1, 2]
    assert back.column("d").to_pylist() == [dt.date(2024, 5, 1), None]
    assert back.column("ts").to_pylist() == [dt.datetime(2024, 5, 1, 12, 30), None]
    assert back.column("bin").to_pylist() == [b"\x00", None]
    assert back.column("l").to_pylist() == ["[1, 2]", None]


def test_partition_by_is_refused(sqlite_ctx: SourceContext, jdbc, people: pa.Table) -> None:
    with pytest.raises(SourceError, match="partitionBy does not apply to jdbc tables"):
        jdbc.write(sqlite_ctx, people, "shop.people", "overwrite", {}, ["team"])


@pytest.mark.postgres
def test_postgresql_round_trip(request: pytest.FixtureRequest, ctx: SourceContext, jdbc, people: pa.Table,
                               rows) -> None:
    url = request.getfixturevalue("postgres_url")
    ctx.connections["pg"] = {"url": url}
    jdbc.write(ctx, people, "pg.people_src_test", "overwrite", {}, [])
    jdbc.write(ctx, people, "pg.people_src_test", "append", {}, [])
    assert jdbc.read(ctx, "pg.people_src_test", {}).num_rows == 8
    jdbc.write(ctx, people, "pg.people_src_test", "overwrite", {}, [])
    assert rows(jdbc.read(ctx, "pg.people_src_test", {})) == rows(people)
    t = jdbc.read(ctx, "pg.people_src_test", {"directQuery": "select team, count(*) as n from people_src_test "
                                                          "group by team order by team"})
    assert t.to_pydict() == {"team": ["a", "b"], "n": [2, 2]}
    with pytest.raises(SourceError, match="already exists"):
        jdbc.write(ctx, people, "pg.people_src_test", "errorIfExists", {}, [])
