"""Runs one `select … as t` on the engine chosen for it (choice.py): DuckDB here, or Daft on the cluster."""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Protocol

from console.kernel.sqlengines import choice
from console.kernel.sqlengines.spark import Untranslatable

if TYPE_CHECKING:
    from console.kernel.catalog import Catalog, Entry
    from console.kernel.sql import SqlEngine
    from console.kernel.sqlengines.cluster import ClusterSql


class Session(Protocol):
    """What a select needs of the session (console/kernel/session.py, which imports this module)."""

    conf: dict[str, str]
    cfg: Any
    tables: "Catalog"

    @property
    def sql(self) -> "SqlEngine": ...

    @property
    def cluster_sql(self) -> "ClusterSql": ...


def run_select(session: "Session", sql: str, line: int, column: int, name: str = "result") -> "Entry":
    """The select's result (a DistributedTable when it ran on the cluster, named `name`); CellError
    (by the engine that ran it, or the one that refused it) otherwise."""
    import sqlglot

    from console.kernel.sql import untranslatable_error
    from console.kernel.sqlengines import daft as to_daft
    from console.kernel.sqlengines.duckdb import transpile as duckdb_transpile

    engine = choice.engine(session.conf, session.cfg)
    if engine == "auto":
        try:  # the local translation is cached and says which tables the select reads
            refs = duckdb_transpile(sql)[1]
        except sqlglot.errors.SqlglotError:  # Untranslatable too
            refs = ()
        if not refs or not _goes_to_cluster(session, refs):
            return session.sql.query(sql, session.tables, line, column)
    elif engine == "local":
        return session.sql.query(sql, session.tables, line, column)
    try:
        plan = to_daft.transpile(sql, *_inputs(session, sql))
    except Untranslatable as exc:  # no silent fallback: a statement for the cluster fails by name
        raise untranslatable_error(exc, sql, line, column) from None
    except sqlglot.errors.SqlglotError:
        return session.sql.query(sql, session.tables, line, column)  # it reports the syntax error
    return session.cluster_sql.query(plan.sql, plan.refs, session.tables, _needs_cpu(plan.sql), line, column, name,
                                     functions=plan.functions, values=plan.values)


@functools.lru_cache(maxsize=256)
def _needs_cpu(daft_sql: str) -> bool:
    """Whether the translated select sorts: a sort samples in a task that needs a free CPU
    (cluster_driver.wait_for_cpu). Cached as the translation is: a warm statement parses nothing."""
    import sqlglot
    from sqlglot import exp

    try:
        return any(True for _ in sqlglot.parse_one(daft_sql, read="duckdb").find_all(exp.Order, exp.Window))
    except sqlglot.errors.SqlglotError:
        return True


@functools.lru_cache(maxsize=256)
def _refs(sql: str) -> tuple[str, ...]:
    from console.kernel.sqlengines.spark import parse, table_refs

    return tuple(table_refs(parse(sql)))


def table_refs(sql: str) -> tuple[str, ...]:
    """The catalog names a select reads (() when it does not parse: its run reports that)."""
    import sqlglot

    try:
        return _refs(sql)
    except (sqlglot.errors.SqlglotError, Untranslatable, ValueError, RecursionError):
        return ()


def _inputs(session: "Session", sql: str) -> tuple[tuple[str, ...], frozenset[str], tuple[tuple[str, Any], ...]]:
    """The column names of the catalog tables the select names (for Spark's case-insensitive match),
    which of them are numbers, and each table's schema (which types what DuckDB computes on the cluster)."""
    from console.kernel.sqlengines.spark import numeric_columns

    names: list[str] = []
    schemas = []
    for ref in _refs(sql):
        entry = session.tables.entry(ref)
        if entry is not None:
            schemas.append((ref, entry.schema))
            names += [n for n in entry.schema.names if n not in names]
    return tuple(names), numeric_columns([s for _, s in schemas]), tuple(schemas)


def _goes_to_cluster(session: "Session", refs: tuple[str, ...]) -> bool:
    """auto: an input already on the cluster (an earlier cluster result: it never comes into the
    kernel for a select), or big inputs (sizes first: a small statement makes no Ray connection)
    on 2+ CPU nodes."""
    from console.kernel.catalog import DistributedTable

    if any(isinstance(session.tables.entry(ref), DistributedTable) for ref in refs):
        return True
    if choice.input_bytes(session.tables, refs) < choice.cluster_bytes(session.conf, session.cfg):
        return False
    if not session.cfg.get("RAY_ADDRESS"):  # the embedded head is one node on loopback
        return False
    return session.cluster_sql.nodes() >= 2

