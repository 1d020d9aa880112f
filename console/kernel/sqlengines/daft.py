"""Spark SQL -> Daft SQL for the cluster path: an allowlist, so nothing answers differently.

Daft reads Spark text wrongly without an error (Java date patterns printed as text, 0-based
`substr`, `regexp_extract` escapes, 1/0 = inf), so Spark text never reaches `daft.sql` as
written. sqlglot parses it (console/kernel/sqlengines/spark.py), the rewrites below say each
Spark construct in Daft's words, and then every node and function left must be on the allowlist
(`_NODES`, `_FUNCTIONS`); anything else fails naming itself and the setting that runs it locally.

Refused on purpose: table functions (`read_parquet('…')` in FROM) and the file and URL functions
(`url_download`, `file`, …), which would read any path the cluster sees; a cluster select reads
only catalog tables, whose paths passed the data roots check at `load`.
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

from console.kernel.sqlengines import daft_duck, daft_grouping, daft_groups, daft_windows
from console.kernel.sqlengines.daft_local import Inputs
from console.kernel.sqlengines.daft_rewrites import ENGINE, HINT, fn_name, refuse, rewrite
from console.kernel.sqlengines.spark import Untranslatable, defined_names, parse, post_order, table_refs

__all__ = ["ENGINE", "HINT", "DaftPlan", "transpile"]
# Reading files or URLs by name: refused (the data roots rule), with their own message.
_FILE_FUNCTIONS = {"url_download", "url_upload", "download", "upload", "file", "file_size", "file_exists",
                   "file_path", "image_file", "audio_file", "video_file", "hdf5_file", "read_parquet", "read_csv",
                   "read_json", "read_deltalake", "read_iceberg", "read_lance", "read_sql"}

# The allowlist: the nodes the generated Daft SQL may contain (what Daft says with Spark's meaning;
# the rest goes to DuckDB inside Daft, daft_duck.py) ...
_NODES: tuple[type, ...] = (
    exp.Select, exp.From, exp.Join, exp.Where, exp.Group, exp.Having, exp.Order, exp.Ordered, exp.Limit,
    exp.Offset, exp.Column, exp.Identifier, exp.Literal, exp.Alias, exp.Table, exp.TableAlias, exp.Star,
    exp.Paren, exp.Null, exp.Boolean, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.And, exp.Or,
    exp.Not, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Neg, exp.Is, exp.In, exp.Between,
    exp.Like, exp.Case, exp.If, exp.Coalesce, exp.Cast, exp.DataType, exp.DataTypeParam, exp.Count,
    exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Distinct, exp.Window, exp.WindowSpec, exp.RowNumber, exp.Rank,
    exp.DenseRank, exp.Lag, exp.Lead, exp.With, exp.CTE, exp.Subquery, exp.Union, exp.Intersect, exp.Exists,
    exp.Rollup, exp.NullSafeEQ,
    exp.ConcatWs, exp.Concat, exp.Lower, exp.Upper, exp.Length, exp.RegexpExtract, exp.Bracket,
    exp.DateDiff, exp.Stddev, exp.StddevSamp, exp.Anonymous, exp.Var, exp.RegexpReplace, exp.Left,
    exp.Right, exp.Year, exp.Month, exp.Day, exp.Quarter, exp.Tuple, exp.GroupingSets, exp.Cube,
)
# ... and the Daft functions the rewrites call (a function the user writes is Spark's: DuckDB's).
_FUNCTIONS = {"concat", "quarter", "strftime", "timestamp_seconds", "to_date", "to_datetime", "to_unix_epoch",
              "substr", "find", "regexp_split", "explode", "list_count", "json_tuple", "struct_get", "datediff",
              "length", "strip", "__first_value", "__last_value"}


_Printer: Any = DuckDB.Generator  # sqlglot's class attribute, not a type mypy can subclass


class _DaftDialect(DuckDB):
    """DuckDB's printer with 0-based list indexes (Daft's) and Spark-style semi/anti joins."""

    INDEX_OFFSET = 0

    class Generator(_Printer):
        TYPE_MAPPING = {**DuckDB.Generator.TYPE_MAPPING, exp.DataType.Type.TEXT: "VARCHAR",
                        exp.DataType.Type.VARCHAR: "VARCHAR"}

        def ordered_sql(self, expression: exp.Ordered) -> str:
            # Always explicit: Spark sorts NULLs first ascending and last descending; Daft's default differs.
            desc = bool(expression.args.get("desc"))
            nulls = "NULLS FIRST" if expression.args.get("nulls_first") else "NULLS LAST"
            return f"{self.sql(expression, 'this')}{' DESC' if desc else ' ASC'} {nulls}"

        def nullsafeeq_sql(self, expression: exp.NullSafeEQ) -> str:  # Daft's SQL has <=>, not IS NOT DISTINCT FROM
            return f"{self.sql(expression, 'this')} <=> {self.sql(expression, 'expression')}"

        def join_sql(self, expression: exp.Join) -> str:
            kind = (expression.kind or "").upper()
            if kind == "CROSS":  # Daft's SQL has the comma join, not CROSS JOIN
                return f", {self.sql(expression, 'this')}"
            if kind in ("SEMI", "ANTI"):
                on = self.sql(expression, "on")
                return f" LEFT {kind} JOIN {self.sql(expression, 'this')} ON {on}"
            return str(super().join_sql(expression))


class DaftPlan(NamedTuple):
    """A select in Daft's words: the SQL, the catalog tables it reads, the functions DuckDB computes
    inside it (name -> spec, daft_udf.py) and its VALUES (name -> DuckDB SQL). Shared by the cache:
    never changed by its users."""

    sql: str
    refs: tuple[str, ...]
    functions: dict[str, dict[str, Any]]
    values: dict[str, str]


@functools.lru_cache(maxsize=256)
def transpile(sql: str, columns: tuple[str, ...] = (), numeric: frozenset[str] = frozenset(),
              schemas: tuple[tuple[str, Any], ...] = ()) -> DaftPlan:
    """The select in Daft's words. Raises Untranslatable, or sqlglot's ParseError.

    columns: the input tables' column names; a column written in another case is matched to its
    name, as Spark matches them (Daft's own matching is case-sensitive). numeric: their numeric
    columns (lower-case): a cast of a number to an integer needs no detour through DECIMAL.
    schemas: (name, Arrow schema) of the catalog tables it reads, which type what DuckDB computes.
    """
    tree = _parsed(sql)
    _refuse_sources(tree)
    _local_refusals(sql)
    refs = table_refs(tree)
    _match_case(tree, columns)
    tree, values = daft_groups.inline_values(tree)
    tree = _lateral_views(tree)
    numeric = numeric - defined_names(tree)
    _name_projections(tree)
    tree = daft_grouping.expand_grouping_sets(tree)
    tree = daft_grouping.exists_branches(tree)
    functions = daft_duck.place(tree, lambda node: _native(node, numeric), Inputs(schemas, values))
    tree = daft_windows.partition_aggregates(tree)
    tree = daft_groups.split_groups(tree)
    daft_groups.align_unions(tree)
    tree = daft_groups.except_joins(tree)
    daft_groups.guard_global_aggregates(tree)
    tree = post_order(tree, lambda node: rewrite(node, numeric))
    tree = daft_windows.spark_windows(tree)
    tree = _window_order(tree)
    _check_allowed(tree)
    return DaftPlan(tree.sql(dialect=_DaftDialect), refs, functions, values)


def _parsed(sql: str) -> exp.Expr:
    """The statement's tree; sqlglot tripping on the text (an IndexError for `map(1,`) is the
    statement's error, said so, as the local engine says it (duckdb.transpile)."""
    from sqlglot.errors import SqlglotError

    try:
        return parse(sql)
    except (SqlglotError, Untranslatable):
        raise
    except Exception as exc:
        raise Untranslatable("this statement", ENGINE,
                             f"sqlglot could not read it ({type(exc).__name__}: {exc}); {HINT}") from None


def _local_refusals(sql: str) -> None:
    """What the local engine refuses the cluster refuses too: its refusals are Spark's own (a type
    Spark rejects, a bad format) or forms whose meaning it cannot keep, and the cluster's DuckDB
    functions are its translation."""
    from console.kernel.sqlengines import duckdb as to_duckdb

    try:
        to_duckdb.transpile(sql)
    except Untranslatable as exc:
        prefix = f"{exc.construct} is not supported on {exc.engine}: "
        why = str(exc)[len(prefix):] if str(exc).startswith(prefix) else ""
        raise Untranslatable(exc.construct, ENGINE, why or "the local engine (DuckDB) cannot run it either") from None


def _native(node: exp.Expr, numeric: frozenset[str]) -> bool:
    """Whether Daft says this expression with Spark's meaning (all of it on the allowlist)."""
    try:
        _check_allowed(post_order(node.copy(), lambda n: rewrite(n, numeric)))
    except Exception:  # Untranslatable, or a rewrite tripping on a form it did not foresee
        return False
    return True


def _match_case(tree: exp.Expr, columns: tuple[str, ...]) -> None:
    exact = set(columns)
    by_lower: dict[str, str] = {}
    for name in columns:
        by_lower.setdefault(name.lower(), name)
    for col in tree.find_all(exp.Column):
        name = col.name
        real = by_lower.get(name.lower())
        if name and name not in exact and real is not None:
            col.set("this", exp.to_identifier(real, quoted=True))


def _refuse_sources(tree: exp.Expr) -> None:
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) and not daft_groups.constant_generator(table.this):
            raise Untranslatable(f"the table function {fn_name(table.this)}", ENGINE,
                                 "a select on the cluster reads catalog tables only: load the data first")
    for fn in tree.find_all(exp.Func):
        name = fn_name(fn)
        if name in _FILE_FUNCTIONS:
            raise Untranslatable(f"{name}()", ENGINE, "SQL reads files only through load (the data roots rule)")


def _lateral_views(tree: exp.Expr) -> exp.Expr:
    """`FROM t LATERAL VIEW explode(e) v AS c` -> `FROM (SELECT *, explode(e) AS c FROM t) AS t`."""
    for select in list(tree.find_all(exp.Select)):
        laterals = select.args.get("laterals") or []
        if not laterals:
            continue
        source = select.args.get("from_") or select.args.get("from")
        if len(laterals) > 1 or select.args.get("joins") or source is None \
                or not isinstance(source.this, exp.Table):
            raise Untranslatable("LATERAL VIEW beside joins or another LATERAL VIEW", ENGINE, HINT)
        lateral = laterals[0]
        fn = lateral.this
        alias = lateral.args.get("alias")
        if lateral.args.get("outer") or not isinstance(fn, exp.Explode) or isinstance(fn, exp.Posexplode) \
                or alias is None or len(alias.columns) != 1:
            raise Untranslatable(f"LATERAL VIEW {fn.sql('spark')}", ENGINE, "only `explode(…) v AS col`; " + HINT)
        table = source.this
        name = table.alias_or_name
        inner = exp.select(exp.Star(), exp.alias_(fn.copy(), alias.columns[0].name)).from_(table.copy())
        source.set("this", exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(name))))
        select.set("laterals", None)
        view = alias.name
        for col in select.find_all(exp.Column):  # v.col now lives in the subquery
            if view and col.table == view:
                col.set("table", exp.to_identifier(name))
    return tree


def _window_order(tree: exp.Expr) -> exp.Expr:
    """Daft sorts on a window's alias only from outside: `SELECT * FROM (…) ORDER BY … LIMIT …`."""
    for select in list(tree.find_all(exp.Select)):
        order = select.args.get("order")
        if order is None or not any(isinstance(e, exp.Window) for p in select.expressions for e in p.walk()):
            continue
        limit, offset = select.args.get("limit"), select.args.get("offset")
        for key in ("order", "limit", "offset"):
            select.set(key, None)
        outer = exp.select(exp.Star()).from_(exp.Subquery(this=select.copy(), alias=exp.TableAlias(
            this=exp.to_identifier("_windowed"))))
        outer.set("order", order)
        if limit is not None:
            outer.set("limit", limit)
        if offset is not None:
            outer.set("offset", offset)
        if select is tree:
            tree = outer
        else:
            select.replace(outer)
    return tree


def _name_projections(tree: exp.Expr) -> None:
    """Daft names an unaliased expression after its first column (two would collide): name each as Spark's text."""
    for select in tree.find_all(exp.Select):
        select.set("expressions", [proj if isinstance(proj, (exp.Alias, exp.Column, exp.Star))
                                   else exp.alias_(proj, proj.sql("spark").lower(), quoted=True)
                                   for proj in select.expressions])


def _check_allowed(tree: exp.Expr) -> None:
    for node in tree.walk():
        if isinstance(node, exp.Anonymous):
            name = str(node.name).lower()
            if name not in _FUNCTIONS and not name.startswith(("__duck_", "__collect")):
                raise refuse(node)
        elif not isinstance(node, _NODES):
            raise refuse(node)
