"""Databases through SQLAlchemy: `jdbc.`alias.table`` after `connect jdbc … as alias`, or a url option."""
from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any, Iterator
from urllib.parse import unquote, urlsplit

from console.sources.base import (
    Source, SourceContext, SourceError, exists_error, normalize_mode, option, register, schema_mismatch,
)
from console.sources.paths import resolve

if TYPE_CHECKING:
    import pyarrow as pa
    from sqlalchemy.engine import Connection, Engine

BATCH_ROWS = 10_000
# JDBC URLs as MLSQL users write them, mapped to the SQLAlchemy dialect that speaks the same database.
_JDBC_DIALECTS = {"postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg",
                  "mysql": "mysql+pymysql", "mariadb": "mariadb+pymysql", "sqlserver": "mssql+pyodbc",
                  "oracle": "oracle+oracledb"}
# Databases that are a local file: their path is fenced like a load/save path.
_FILE_BACKENDS = ("sqlite", "duckdb")
# Query parameters of a SQLite URI filename (sqlite.org/uri.html): dropped, because the checked
# file goes on as a plain path (a URI could name another file, a vfs or a shared cache).
_URI_PARAMS = {"uri", "mode", "cache", "vfs", "immutable", "nolock", "psow", "modeof"}
# A file database must not reach other files through its own SQL (directQuery).
_DUCKDB_FENCE = {"enable_external_access": False, "autoinstall_known_extensions": False,
                 "autoload_known_extensions": False, "lock_configuration": True}


def sqlalchemy_url(url: str, options: dict[str, str]) -> Any:
    """A SQLAlchemy URL from a SQLAlchemy or jdbc: URL plus user/password options."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    text = url.strip()
    if text.startswith("jdbc:sqlite:"):
        text = "sqlite:///" + text[len("jdbc:sqlite:"):]
    elif text.startswith("jdbc:"):
        match = re.match(r"jdbc:([a-z0-9]+):(//.*)$", text)
        if not match:
            raise SourceError(f"option url '{url}' is not a URL this console understands")
        dialect = _JDBC_DIALECTS.get(match.group(1), match.group(1))
        text = f"{dialect}:{match.group(2).split('?')[0]}"
    try:
        parsed = make_url(text)
    except ArgumentError as exc:
        raise SourceError(f"option url '{url}' is not a valid database URL: {exc}") from None
    user, password = option(options, "user"), option(options, "password")
    if user and not parsed.username:
        parsed = parsed.set(username=user)
    if password and not parsed.password:
        parsed = parsed.set(password=password)
    return parsed


def local_url(ctx: SourceContext, url: Any) -> Any:
    """url with a file database's path resolved (relative ones under the lake) and fenced.

    sqlite and duckdb URLs name a local file (`sqlite:///shop.db`, `sqlite:////abs/x.db`,
    `sqlite:///file:x.db?uri=true`): it goes through the same check as a load path, so the
    server's own files and anything outside the data roots are refused. In-memory databases pass.
    """
    if url.get_backend_name() not in _FILE_BACKENDS:
        return url
    db = (url.database or "").strip()
    query = {k: v for k, v in url.query.items() if k not in _URI_PARAMS}
    memory = db in ("", ":memory:")
    if db.startswith("file:"):
        parts = urlsplit(db)
        if parts.netloc not in ("", "localhost"):
            raise SourceError(f"database file {db} names another host; give a local path")
        db = unquote(parts.path)
        memory = db in ("", ":memory:") or url.query.get("mode") == "memory" or "mode=memory" in parts.query
    if memory:
        return url.set(database=":memory:", query=query)
    path = resolve(ctx, db)
    if path.parent == ctx.lake.resolve():
        path.parent.mkdir(parents=True, exist_ok=True)  # `sqlite:///shop.db` in a lake not made yet
    return url.set(database=str(path), query=query)


def split_target(ctx: SourceContext, path: str, options: dict[str, str]) -> tuple[dict[str, str], str]:
    """(merged options, table name): `alias.table` uses ctx.connections[alias]; else options' url."""
    alias, dot, rest = path.strip().partition(".")
    conns = {k.lower(): v for k, v in ctx.connections.items()}
    if dot and alias.lower() in conns:
        # Statement options win over the connection's, as MLSQL merges them.
        return {**conns[alias.lower()], **options}, rest
    if option(options, "url"):
        return dict(options), path.strip()
    if dot:
        raise SourceError(f"no connection named '{alias}': define it first with "
                          f"`connect jdbc where url=\"…\" as {alias};` or give a url option")
    raise SourceError(f"jdbc.`{path}` needs a connection: write jdbc.`alias.{path}` after "
                      f"`connect jdbc where url=\"…\" as alias;`, or give a url option")


@register("jdbc")
class JdbcSource(Source):
    """Read `select * from table` or directQuery; write with every mode, overwrite replacing the table."""

    def _engine(self, ctx: SourceContext, opts: dict[str, str]) -> "Engine":
        from sqlalchemy import create_engine, event
        from sqlalchemy.exc import NoSuchModuleError

        url = option(opts, "url")
        if not url:
            raise SourceError("the jdbc connection has no url option")
        target = local_url(ctx, sqlalchemy_url(url, opts))
        backend = target.get_backend_name()
        try:
            if backend == "duckdb":
                return create_engine(target, connect_args={"config": dict(_DUCKDB_FENCE)})
            engine = create_engine(target)
        except (NoSuchModuleError, ImportError) as exc:
            raise SourceError(f"no database driver for '{url}': {exc}") from None
        if backend == "sqlite":
            event.listen(engine, "connect", _no_attach)
        return engine

    def read(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pa.Table":
        from sqlalchemy import select, text
        from sqlalchemy.exc import SQLAlchemyError

        opts, name = split_target(ctx, path, options)
        query = option(opts, "directQuery")
        engine = self._engine(ctx, opts)
        try:
            with engine.connect() as conn:
                types: dict[str, "pa.DataType"] = {}
                if query:
                    result = conn.execute(text(query))
                else:
                    table = self._reflect(conn, name)
                    if table is None:
                        raise SourceError(f"table {name} does not exist in {engine.url.render_as_string()}")
                    types = {c.name: arrow_type(c.type) for c in table.columns}
                    # A select over the reflected table lets the dialect turn stored text into dates etc.
                    result = conn.execute(select(table))
                return rows_to_arrow(list(result.keys()), _batches(result), types)
        except SQLAlchemyError as exc:
            raise SourceError(f"cannot load jdbc {path}: {_first_line(exc)}") from exc
        finally:
            engine.dispose()

    def write(self, ctx: SourceContext, table: "pa.Table", path: str, mode: str,
              options: dict[str, str], partition_by: list[str]) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        mode = normalize_mode(mode)
        if partition_by:
            raise SourceError("partitionBy does not apply to jdbc tables")
        opts, name = split_target(ctx, path, options)
        engine = self._engine(ctx, opts)
        try:
            with engine.connect() as conn:
                existing = self._reflect(conn, name)
            if existing is not None:
                if mode == "ignore":
                    return
                if mode == "errorIfExists":
                    raise exists_error(f"table {name}")
            if mode == "append" and existing is not None:
                self._check_columns(existing, table, name)
                with engine.begin() as conn:
                    self._insert(conn, existing, table)
            elif existing is None:
                with engine.begin() as conn:
                    created = self._create(conn, name, table)
                    self._insert(conn, created, table)
            else:
                self._replace(engine, name, table)
        except SQLAlchemyError as exc:
            raise SourceError(f"cannot save jdbc {path}: {_first_line(exc)}") from exc
        finally:
            engine.dispose()

    def _replace(self, engine: "Engine", name: str, table: "pa.Table") -> None:
        """Fill a fresh table first and swap names last, so a failed insert leaves the old table as it was
        (SQLite's driver commits DDL on its own, so one transaction around drop+insert would not do)."""
        from sqlalchemy import text

        schema, _, base = name.rpartition(".")
        temp = f"{base}__new_{uuid.uuid4().hex[:8]}"
        temp_name = f"{schema}.{temp}" if schema else temp
        try:
            with engine.begin() as conn:
                created = self._create(conn, temp_name, table)
                self._insert(conn, created, table)
            with engine.begin() as conn:
                prep = conn.dialect.identifier_preparer
                conn.execute(text(f"DROP TABLE {self._quoted(conn, name)}"))
                conn.execute(text(f"ALTER TABLE {self._quoted(conn, temp_name)} RENAME TO {prep.quote(base)}"))
        except BaseException:
            # The half-filled table outlives a rollback where CREATE committed on its own.
            with engine.begin() as conn:
                conn.execute(text(f"DROP TABLE IF EXISTS {self._quoted(conn, temp_name)}"))
            raise

    def _quoted(self, conn: "Connection", name: str) -> str:
        prep = conn.dialect.identifier_preparer
        return ".".join(prep.quote(part) for part in name.split("."))

    def _reflect(self, conn: "Connection", name: str) -> Any:
        from sqlalchemy import MetaData, Table, inspect

        schema, _, base = name.rpartition(".")
        if not inspect(conn).has_table(base, schema=schema or None):
            return None
        return Table(base, MetaData(), schema=schema or None, autoload_with=conn)

    def _create(self, conn: "Connection", name: str, table: "pa.Table") -> Any:
        from sqlalchemy import Column, MetaData, Table

        schema, _, base = name.rpartition(".")
        columns = [Column(f.name, sql_type(f.type), nullable=True) for f in table.schema]
        created = Table(base, MetaData(), *columns, schema=schema or None)
        created.create(conn)
        return created

    def _insert(self, conn: "Connection", target: Any, table: "pa.Table") -> None:
        import json

        import pyarrow as pa

        nested = {f.name for f in table.schema if pa.types.is_nested(f.type)}
        for batch in table.to_batches(max_chunksize=BATCH_ROWS):
            rows = batch.to_pylist()
            if nested:
                # Lists and structs have no portable column type; they are stored as JSON text.
                for row in rows:
                    for key in nested:
                        row[key] = None if row[key] is None else json.dumps(row[key], default=str)
            if rows:
                conn.execute(target.insert(), rows)

    def _check_columns(self, existing: Any, table: "pa.Table", name: str) -> None:
        import pyarrow as pa

        old = [c.name for c in existing.columns]
        if [n.lower() for n in old] != [n.lower() for n in table.column_names]:
            old_schema = pa.schema([(c.name, arrow_type(c.type) or pa.string()) for c in existing.columns])
            raise schema_mismatch(f"table {name}", old_schema, table.schema)


def _no_attach(dbapi_connection: Any, _record: Any) -> None:
    """No ATTACH and no VACUUM INTO (which attaches its target): a directQuery could otherwise
    open or create any file, past the check on the url's own path."""
    import sqlite3

    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)


def _batches(result: Any) -> Iterator[list[tuple]]:
    while True:
        rows = result.fetchmany(BATCH_ROWS)
        if not rows:
            return
        yield [tuple(r) for r in rows]


def rows_to_arrow(names: list[str], batches: Iterator[list[tuple]], types: dict[str, "pa.DataType"]) -> "pa.Table":
    """Cursor rows to Arrow, column-wise: typed by the reflected table where known, inferred otherwise."""
    import pyarrow as pa

    chunks: list[list[Any]] = [[] for _ in names]
    for rows in batches:
        for i, column in enumerate(zip(*rows, strict=True)):
            chunks[i].extend(column)
    arrays = []
    for name, values in zip(names, chunks, strict=True):
        wanted = types.get(name)
        try:
            arrays.append(pa.array(values, type=wanted) if wanted is not None else pa.array(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays.append(pa.array(values))
    return pa.table(arrays, names=names) if names else pa.table({})


def arrow_type(sql: Any) -> "pa.DataType | None":
    import pyarrow as pa
    from sqlalchemy import types as t

    checks = [(t.Boolean, pa.bool_()), (t.BigInteger, pa.int64()), (t.SmallInteger, pa.int64()),
              (t.Integer, pa.int64()), (t.Float, pa.float64()), (t.DateTime, pa.timestamp("us")),
              (t.Date, pa.date32()), (t.LargeBinary, pa.binary()), (t.String, pa.string())]
    for cls, arrow in checks:
        if isinstance(sql, cls):
            return arrow
    if isinstance(sql, t.Numeric) and sql.precision and sql.precision <= 38:
        return pa.decimal128(sql.precision, sql.scale or 0)
    return None


def sql_type(arrow: "pa.DataType") -> Any:
    import pyarrow as pa
    from sqlalchemy import types as t

    if pa.types.is_boolean(arrow):
        return t.Boolean()
    if pa.types.is_integer(arrow):
        return t.BigInteger()
    if pa.types.is_floating(arrow):
        return t.Double()
    if pa.types.is_decimal(arrow):
        return t.Numeric(arrow.precision, arrow.scale)
    if pa.types.is_timestamp(arrow):
        return t.DateTime(timezone=arrow.tz is not None)
    if pa.types.is_date(arrow):
        return t.Date()
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow) or pa.types.is_fixed_size_binary(arrow):
        return t.LargeBinary()
    return t.Text()


def _first_line(exc: Exception) -> str:
    return str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
