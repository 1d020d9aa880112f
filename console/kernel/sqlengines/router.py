"""Runs one `select … as t` on the engine chosen for it (choice.py): DuckDB here, or Daft on the cluster."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from console.kernel.sqlengines import choice
from console.kernel.sqlengines.spark import Untranslatable

if TYPE_CHECKING:
    from console.kernel.session import Session


def run_select(session: "Session", sql: str, line: int, column: int) -> pa.Table:
    """The select's result; CellError (by the engine that ran it, or the one that refused it) otherwise."""
    import sqlglot
    from sqlglot import exp

    from console.kernel.sql import untranslatable_error
    from console.kernel.sqlengines import daft as to_daft

    engine = choice.engine(session.conf, session.cfg)
    if engine == "local":
        return session.sql.query(sql, session.tables, line, column)
    try:
        daft_sql, refs = to_daft.transpile(sql, _columns(session, sql))
        refusal: Untranslatable | None = None
    except sqlglot.errors.SqlglotError:
        return session.sql.query(sql, session.tables, line, column)  # it reports the syntax error
    except Untranslatable as exc:
        daft_sql, refusal = "", exc
        from console.kernel.sqlengines.spark import parse, table_refs

        refs = table_refs(parse(sql))
    if engine == "auto" and not _goes_to_cluster(session, refs):
        return session.sql.query(sql, session.tables, line, column)
    if refusal is not None:  # no silent fallback: a big statement the cluster cannot run fails by name
        raise untranslatable_error(refusal, sql, line, column)
    tree = sqlglot.parse_one(daft_sql, read="duckdb")
    needs_cpu = any(True for _ in tree.find_all(exp.Order, exp.Window))
    return session.cluster_sql.query(daft_sql, refs, session.tables, needs_cpu, line, column)


def _columns(session: "Session", sql: str) -> tuple[str, ...]:
    """The column names of the catalog tables the select names (for Spark's case-insensitive match)."""
    from console.kernel.sqlengines.spark import parse, table_refs

    names: list[str] = []
    for ref in table_refs(parse(sql)):
        entry = session.tables.entry(ref)
        if entry is not None:
            names += [n for n in entry.schema.names if n not in names]
    return tuple(names)


def _goes_to_cluster(session: "Session", refs: tuple[str, ...]) -> bool:
    """auto: big inputs (sizes first: a small statement makes no Ray connection) on 2+ CPU nodes."""
    if choice.input_bytes(session.tables, refs) < choice.cluster_bytes(session.conf, session.cfg):
        return False
    if not session.cfg.get("RAY_ADDRESS"):  # the embedded head is one node on loopback
        return False
    return session.cluster_sql.nodes() >= 2

