"""Which parts of a cluster select DuckDB computes inside Daft, decided in the kernel.

Daft keeps the relational work and every expression it says with Spark's meaning (daft.py's
allowlist). An expression it cannot say becomes a function call, `__duck_<hash>(args)`, that
DuckDB answers on the workers (daft_udf.py) with the local engine's translation of that same
expression (duckdb.py, checked against Spark by the parity harness):

- a scalar expression: the largest one around the construct Daft lacks; its arguments are what
  Daft computes below it (columns, aggregates, windows, scalar subqueries); everything scalar
  inside it, literals included, is DuckDB's. A constant one (`SELECT soundex('x')`) gets a
  literal argument, for the row count;
- an aggregate Daft lacks (`percentile`, `max_by`, `regr_slope`, a DISTINCT sum, …): Daft
  collects each group's (or window's) argument columns as a list (`__collect`), and DuckDB
  aggregates each list.

DuckDB needs the arguments' types to say the result's: they come from a probe, the select around
the expression with the arguments as its only projections, translated by the local engine and
bound by DuckDB over empty tables of the inputs' schemas (and the statement's VALUES). Nothing
is read. A generator (explode …) never goes to DuckDB: it makes rows, not values.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, NamedTuple

from sqlglot import exp

from console.kernel.sqlengines.daft_local import (_WINDOW_ONLY, Inputs, argument_types, bind, is_aggregate,
                                                   local_sql)
from console.kernel.sqlengines.spark import Untranslatable, function_name

ENGINE = "the cluster (Daft)"
# Clause and select nodes: what they hold is looked at, they are never a function's argument.
_CONTAINERS = (exp.Select, exp.From, exp.Join, exp.Where, exp.Group, exp.Having, exp.Order, exp.Limit, exp.Offset,
               exp.Distinct,
               exp.With, exp.CTE, exp.Union, exp.Intersect, exp.Except, exp.Subquery, exp.Table, exp.TableAlias,
               exp.Alias, exp.Ordered, exp.Lateral, exp.Qualify, exp.Rollup, exp.Cube, exp.GroupingSets, exp.Values)
_LEAVES = (exp.Column, exp.Literal, exp.Identifier, exp.Star, exp.DataType, exp.Null, exp.Boolean, exp.Var,
           exp.Placeholder, exp.Parameter)
# Rows, not values (window-only functions, which need their window, are daft_local's _WINDOW_ONLY).
_GENERATORS = (exp.Explode, exp.Inline, exp.Unnest)
class Region(NamedTuple):
    """An expression DuckDB computes: its node, "row" or "agg", and its arguments (Daft's)."""

    node: exp.Expr
    kind: str
    args: list[exp.Expr]


class _Aggregates(Exception):
    """A scalar expression whose DuckDB SQL aggregates (a Spark aggregate the names above miss)."""


def place(tree: exp.Expr, native: Callable[[exp.Expr], bool], inputs: Inputs) -> dict[str, dict[str, Any]]:
    """Replace each expression Daft cannot say by a DuckDB function call; the functions' specs by name."""
    pristine = tree.copy()  # the probes bind the statement as written
    regions: list[Region] = []
    _classify(tree, native, regions)
    if not regions:
        return {}
    index = {id(n): i for i, n in enumerate(tree.walk())}
    specs: list[tuple[str, dict[str, Any]]] = []
    for i, region in enumerate(regions):
        try:
            specs.append(_spec(region, pristine, index, inputs))
        except _Aggregates:
            if isinstance(region.node.parent, exp.Window):
                raise Untranslatable(f"{function_name(region.node)}() over a window", ENGINE,
                                     'run it locally: set sql.engine = "local" where type="conf";') from None
            regions[i] = Region(region.node, "agg", _collected(region.node))
            specs.append(_spec(regions[i], pristine, index, inputs))
    for region, (name, _) in zip(regions, specs, strict=True):  # outer regions first: they hold inner ones
        region.node.replace(_call(region, name))
    return dict(specs)


def _classify(node: exp.Expr, native: Callable[[exp.Expr], bool], regions: list[Region]) -> None:
    if isinstance(node, _CONTAINERS) or isinstance(node, (exp.Exists, exp.In)) and node.args.get("query"):
        for part in list(node.iter_expressions()):
            _classify(part, native, regions)
        return
    if isinstance(node, _LEAVES + (exp.Lambda, exp.WindowSpec)):  # a lambda belongs to its function, wherever
        return  # that runs; a window's frame (1 PRECEDING) is no value
    if _constant(node):  # DuckDB types literals as Spark does (INT, DECIMAL(2,1), …); Daft's differ
        regions.append(Region(node, "row", []))
        return
    if native(node):
        return
    if isinstance(node, exp.Window):
        # the aggregate itself, not the window around it: `_x OVER (…)` alone is Daft's, but Daft
        # runs no function over a window's aggregate (`__duck(__collect(x)) OVER (…)` is refused)
        if is_aggregate(node.this) and not _own_native(node.this, native):
            regions.append(Region(node, "agg", _collected(node.this)))
            for key in ("partition_by", "order"):
                for spec in _as_list(node.args.get(key)):
                    _classify(spec, native, regions)
            return
    elif is_aggregate(node) and not _own_native(node, native):
        regions.append(Region(node, "agg", _collected(node)))
        return
    elif not isinstance(node, _GENERATORS + _WINDOW_ONLY) and not _own_native(node, native):
        args = _arguments(node)
        regions.append(Region(node, "row", args))
        for arg in args:
            _classify(arg, native, regions)
        return
    for inner in list(node.iter_expressions()):
        _classify(inner, native, regions)


def _constant(node: exp.Expr) -> bool:
    """A value of the statement's own (no column, aggregate, window or subquery in it)."""
    for n in node.walk():
        if isinstance(n, (exp.Column, exp.Star, exp.Window, exp.Select, exp.Subquery, exp.Lambda) + _GENERATORS
                      + _WINDOW_ONLY) or is_aggregate(n):
            return False
    return True


def _as_list(value: Any) -> list[exp.Expr]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _own_native(node: exp.Expr, native: Callable[[exp.Expr], bool]) -> bool:
    """Whether Daft says this node itself, its arguments that it cannot say left to DuckDB."""
    probe = node.copy()
    for child in list(probe.iter_expressions()):
        if not isinstance(child, _LEAVES) and not native(child):
            child.replace(exp.column("_x"))
    return native(probe)


def _arguments(node: exp.Expr) -> list[exp.Expr]:
    """What Daft computes below a scalar expression DuckDB takes: columns, aggregates, windows,
    scalar subqueries (a lambda's own variables stay inside)."""
    out: list[exp.Expr] = []

    def walk(n: exp.Expr, bound: frozenset[str]) -> None:
        for child in n.iter_expressions():
            if isinstance(child, exp.Lambda):
                walk(child, bound | {str(e.name).lower() for e in child.expressions})
            elif isinstance(child, exp.Column):
                if child.table or str(child.name).lower() not in bound:
                    out.append(child)
            elif is_aggregate(child) or isinstance(child, (exp.Window, exp.Subquery)):
                out.append(child)
            elif isinstance(child, (exp.Select, exp.Exists)) or isinstance(child, exp.In) and child.args.get("query"):
                raise Untranslatable(f"a subquery inside {function_name(node)}()", ENGINE,
                                     'run it locally: set sql.engine = "local" where type="conf";')
            else:
                walk(child, bound)

    walk(node, frozenset())
    return out


def _collected(agg: exp.Expr) -> list[exp.Expr]:
    """The columns an aggregate DuckDB computes reads, in its arguments and FILTER (Daft collects
    them per group)."""
    out: list[exp.Expr] = []

    def walk(n: exp.Expr, bound: frozenset[str]) -> None:
        for child in n.iter_expressions():
            if isinstance(child, exp.Lambda):
                walk(child, bound | {str(e.name).lower() for e in child.expressions})
            elif isinstance(child, exp.Column):
                if child.table or str(child.name).lower() not in bound:
                    out.append(child)
            elif isinstance(child, (exp.Window, exp.Subquery, exp.Select)):
                raise Untranslatable(f"{child.sql('spark')} inside {function_name(agg)}()", ENGINE,
                                     'run it locally: set sql.engine = "local" where type="conf";')
            else:
                walk(child, bound)

    walk(agg, frozenset())
    return out


def _call(region: Region, name: str) -> exp.Expr:
    args = _unique(region.args)
    if region.kind == "row":
        return exp.Anonymous(this=name, expressions=args or [exp.Literal.number(0)])
    packed = exp.Anonymous(this="__collect", expressions=args or [exp.Literal.number(0)])
    if isinstance(region.node, exp.Window):
        window = region.node
        over = exp.Window(this=packed, partition_by=window.args.get("partition_by"),
                          order=window.args.get("order"), spec=window.args.get("spec"))
        return exp.Anonymous(this=name, expressions=[over])
    return exp.Anonymous(this=name, expressions=[packed])


def _unique(args: list[exp.Expr]) -> list[exp.Expr]:
    seen: dict[str, exp.Expr] = {}
    for arg in args:
        seen.setdefault(arg.sql("spark"), arg)
    return list(seen.values())


def _spec(region: Region, pristine: exp.Expr, index: dict[int, int], inputs: Inputs) -> tuple[str, dict[str, Any]]:
    """(the function's name, what the workers need: its kind, DuckDB SQL, arguments' and result's types)."""
    from console.kernel.sqlengines import daft_udf

    args = _unique(region.args)
    types = argument_types(region.node, args, region.kind == "agg", pristine, index, inputs)
    names = {a.sql("spark"): f"_a{i}" for i, a in enumerate(args)}
    body = region.node.this if isinstance(region.node, exp.Window) else region.node
    expr = _with_arguments(body, names, region.kind)
    numeric = frozenset(n for n, t in zip(names.values(), types, strict=True) if _is_number(t))
    if region.kind == "row":
        table = "_args"
        statement = exp.select(exp.alias_(expr, "r")).from_(table)
        spec: dict[str, Any] = {"kind": "row", "sql": local_sql(statement, numeric, body)}
    else:
        table = "_rows"
        grouped = exp.select("_g", exp.alias_(expr.copy(), "r")).from_(table).group_by("_g")
        spec = {"kind": "agg", "sql": local_sql(grouped, numeric, body),
                "none_sql": local_sql(exp.select(exp.alias_(expr, "r")).from_(table), numeric, body)}
    import pyarrow as pa

    fields = [pa.field(n, t) for n, t in zip(names.values(), types, strict=True)]
    if region.kind == "agg":
        fields = [pa.field("_g", pa.int64()), *fields]
    empty = pa.schema(fields or [pa.field("_n", pa.null())]).empty_table()
    sql = spec["none_sql"] if region.kind == "agg" else spec["sql"]
    result = bind(sql, {table: empty}, body, rows=True)
    if region.kind == "row" and result.num_rows:  # an answer for no rows: it aggregates
        raise _Aggregates()
    schema = pa.schema([f for f in fields if f.name != "_g"] + [pa.field("r", result.schema.field(0).type)])
    spec["schema"] = daft_udf.schema_text(schema)
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    return f"__duck_{digest}", spec


def _with_arguments(node: exp.Expr, names: dict[str, str], kind: str) -> exp.Expr:
    """The expression with its arguments as the columns _a0, _a1, …"""
    copy = node.copy()
    for arg in (_arguments(copy) if kind == "row" else _collected(copy)):
        new = exp.column(names[arg.sql("spark")])
        if arg is copy:
            return new
        arg.replace(new)
    return copy


def _is_number(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind))
