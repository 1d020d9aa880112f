"""The local engine's words for a piece of a cluster select, and DuckDB's types for it.

daft_duck.py hands DuckDB the expressions Daft cannot say. Their DuckDB SQL is the local engine's
translation (duckdb.py), made from the parsed tree itself: printed back as Spark text and parsed
again, a tree loses what its text does not say (a typed literal `TIMESTAMP '…'` is a strict cast,
`CAST(… AS TIMESTAMP)` a lenient one; the parser's own timestamps are naive). `local_sql` runs
the local engine's steps on the tree (tests/spark/test_cluster_parity.py checks that they give
duckdb.transpile's SQL for every parity statement).

The types come from probes: DuckDB binds a statement over empty tables of the inputs' schemas
(and the statement's VALUES, made by DuckDB: a few constant rows), so nothing is read.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from sqlglot import exp

from console.kernel.sqlengines.spark import Untranslatable, defined_names, function_name, post_order

ENGINE = "the cluster (Daft)"
_HINT = 'run it locally: set sql.engine = "local" where type="conf";'


class Inputs(NamedTuple):
    """What a probe binds over: the catalog tables' schemas, and the statement's VALUES (DuckDB SQL)."""

    schemas: tuple[tuple[str, Any], ...]
    values: dict[str, str]


# Window-only functions, which need their window.
_WINDOW_ONLY = (exp.Rank, exp.DenseRank, exp.Lag, exp.Lead, exp.CumeDist, exp.Ntile, exp.NthValue,
                exp.PercentRank, exp.FirstValue, exp.LastValue, exp.RowNumber, exp.Grouping, exp.GroupingId)
# Spark's aggregate functions (its registry), for those sqlglot reads as plain (anonymous) functions.
_AGGREGATE_NAMES = {
    "any", "any_value", "approx_count_distinct", "approx_percentile", "array_agg", "avg", "bit_and", "bit_or",
    "bit_xor", "bitmap_construct_agg", "bitmap_or_agg", "bool_and", "bool_or", "collect_list", "collect_set",
    "corr", "count", "count_if", "count_min_sketch", "covar_pop", "covar_samp", "every", "first", "first_value",
    "histogram_numeric", "hll_sketch_agg", "hll_union_agg", "kurtosis", "last", "last_value", "max", "max_by",
    "mean", "median", "min", "min_by", "mode", "percentile", "percentile_approx", "regr_avgx", "regr_avgy",
    "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "skewness",
    "some", "std", "stddev", "stddev_pop", "stddev_samp", "sum", "try_avg", "try_sum", "var_pop", "var_samp",
    "variance"}
_WRAPPERS = (exp.Filter, exp.IgnoreNulls, exp.RespectNulls, exp.WithinGroup)



def is_aggregate(node: exp.Expr) -> bool:
    if isinstance(node, _WRAPPERS):
        return is_aggregate(node.this)
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower() in _AGGREGATE_NAMES
    if isinstance(node, exp.Any):  # Spark's any(x), not the quantifier of `x LIKE ANY (…)`
        return not isinstance(node.this, (exp.Subquery, exp.Select, exp.Tuple)) \
            and not isinstance(node.parent, (exp.Predicate, exp.Binary))
    if isinstance(node, (exp.FirstValue, exp.LastValue)):  # Spark's aggregates too, outside a window
        return not isinstance(node.parent, exp.Window)
    return isinstance(node, exp.AggFunc) and not isinstance(node, _WINDOW_ONLY)


def local_sql(tree: exp.Expr, numeric: frozenset[str], node: exp.Expr | None = None) -> str:
    """duckdb.transpile's SQL for a statement given as a tree; its refusal is the cluster's too."""
    from sqlglot.errors import ErrorLevel, UnsupportedError

    from console.kernel.sqlengines import duckdb as to_duckdb

    tree = tree.copy()
    try:
        to_duckdb._spark_range(tree)
        numeric = numeric - defined_names(tree)
        tree = post_order(tree, lambda n: to_duckdb._guarded(n, numeric))
        return str(tree.sql(dialect="duckdb", unsupported_level=ErrorLevel.RAISE))
    except Untranslatable as exc:
        prefix = f"{exc.construct} is not supported on {exc.engine}: "
        why = str(exc)[len(prefix):] if str(exc).startswith(prefix) else ""
        raise Untranslatable(exc.construct, ENGINE, why or "the local engine (DuckDB) cannot run it either") from None
    except UnsupportedError as exc:
        said = str(exc).split("\n")[0].rstrip(".")
        raise Untranslatable(said.split(" is not supported")[0], ENGINE,
                             "the local engine (DuckDB) cannot run it either") from None
    except Exception as exc:  # sqlglot tripping on a form: the statement's error, said so
        what = function_name(node) + "()" if node is not None else "this statement"
        raise Untranslatable(what, ENGINE, f"it could not be translated ({type(exc).__name__}: {exc})") from None


def bind(sql: str, tables: dict[str, Any], node: exp.Expr, rows: bool = False) -> Any:
    """The schema DuckDB gives the statement over these tables (bound over no rows); with `rows`,
    its answer (the tables are empty, or the statement's own VALUES)."""
    from console.kernel.sqlengines import daft_udf

    try:
        if rows:
            return daft_udf.run(sql, tables)
        return daft_udf.run(f"SELECT * FROM ({sql}) LIMIT 0", tables).schema
    except Exception as exc:
        said = str(exc).split("\n")[0]
        raise Untranslatable(f"{function_name(node)}()", ENGINE, f"DuckDB refuses it here ({said}); {_HINT}") from None


def argument_types(node: exp.Expr, args: list[exp.Expr], aggregate: bool, pristine: exp.Expr,
                   index: dict[int, int], inputs: Inputs) -> list[Any]:
    """The arguments' types as DuckDB sees them in their select: the select with them as its only
    projections."""
    if not args:
        return []
    copy = pristine.copy()
    nodes = list(copy.walk())
    node = nodes[index[id(node)]]
    found = [nodes[index[id(a)]] for a in args]
    select = node.find_ancestor(exp.Select)
    if select is None:
        raise Untranslatable(f"{function_name(node)}() outside a select", ENGINE, _HINT)
    # Without the select's GROUP BY: a column's type is the same before it, and an aggregate's
    # the same in a global aggregate, where a column beside it is read through any_value().
    aggregates = not aggregate and any(is_aggregate(a) for a in found)
    select.set("expressions", [exp.alias_(exp.func("any_value", a.copy()) if aggregates and isinstance(a, exp.Column)
                                          else a.copy(), f"_a{i}") for i, a in enumerate(found)])
    for key in ("order", "limit", "offset", "distinct", "qualify", "group", "having"):
        select.set(key, None)
    with_ = copy.args.get("with_")
    if with_ is not None and select is not copy:
        select.set("with_", with_.copy())
    sql = local_sql(select, frozenset(), node)
    tables: dict[str, Any] = {name: schema.empty_table() for name, schema in inputs.schemas}
    for name, text in inputs.values.items():
        tables[name] = bind(text, {}, node, rows=True)
    schema = bind(sql, tables, node)
    return [schema.field(i).type for i in range(len(args))]


def own_nodes(node: exp.Expr) -> list[exp.Expr]:
    """The nodes of an expression that belong to its select (not to a subquery inside it)."""
    out = [node]
    for child in node.iter_expressions():
        if not isinstance(child, (exp.Select, exp.Subquery)):
            out += own_nodes(child)
    return out
