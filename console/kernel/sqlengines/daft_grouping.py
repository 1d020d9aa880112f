"""CUBE, GROUPING SETS and grouping()/grouping_id() on the cluster (daft.py runs this before
daft_duck.place): Daft's SQL has ROLLUP only, and no grouping().

A select grouped by sets of keys is the UNION ALL of one plain grouped select per set, as Spark's
Expand defines it: in each, a key the set leaves out reads NULL outside the aggregates,
grouping(key) is 1 for such a key and 0 for the others, and grouping_id(k1, …, kn) their bits
(k1 the highest; without arguments, every grouping key in order). A set with no keys gives a row
only where there are rows (Spark's aggregate groups by its grouping id there, so an empty input
gives none): its select keeps it with HAVING count(*) > 0. ORDER BY, LIMIT and DISTINCT apply to
the union, by the output names. A plain ROLLUP without grouping() stays Daft's own.
"""
from __future__ import annotations

import itertools

from sqlglot import exp

from console.kernel.sqlengines.daft_local import is_aggregate, own_nodes
from console.kernel.sqlengines.spark import Untranslatable

ENGINE = "the cluster (Daft)"
HINT = 'run it locally: set sql.engine = "local" where type="conf";'
_SETS = (exp.Cube, exp.Rollup, exp.GroupingSets)
_MAX_SETS = 64  # CUBE of 6 keys; more is a statement to run locally, not 2^n scans of the input


def expand_grouping_sets(tree: exp.Expr) -> exp.Expr:
    for select in reversed(list(tree.find_all(exp.Select))):
        group = select.args.get("group")
        if group is None:
            continue
        keys = list(group.expressions)
        if not any(isinstance(k, _SETS) for k in keys):
            continue
        if all(isinstance(k, exp.Rollup) or not isinstance(k, _SETS) for k in keys) and not _grouping_calls(select):
            continue  # Daft's ROLLUP
        made = _union(select, keys)
        if select is tree:
            tree = made
        else:
            select.replace(made)
    return tree


def _grouping_calls(select: exp.Select) -> bool:
    return any(isinstance(n, (exp.Grouping, exp.GroupingId)) for part in _parts(select) for n in own_nodes(part))


def _parts(select: exp.Select) -> list[exp.Expr]:
    return [*select.expressions, *(select.args[k] for k in ("having", "order") if select.args.get(k) is not None)]



def _sets(key: exp.Expr) -> list[list[exp.Expr]]:
    """The key sets one GROUP BY item stands for."""
    if isinstance(key, exp.Cube):
        items = list(key.expressions)
        return [[k for k, keep in zip(items, mask, strict=True) if keep]
                for mask in itertools.product((True, False), repeat=len(items))]
    if isinstance(key, exp.Rollup):
        items = list(key.expressions)
        return [items[:n] for n in range(len(items), -1, -1)]
    if isinstance(key, exp.GroupingSets):
        out = []
        for entry in key.expressions:
            if isinstance(entry, exp.Tuple):
                out.append(list(entry.expressions))
            else:
                out.append([entry.this if isinstance(entry, exp.Paren) else entry])
        return out
    return [[key]]


def _union(select: exp.Select, keys: list[exp.Expr]) -> exp.Select:
    sets = [list({k.sql("spark"): k for part in combo for k in part}.values())  # a key named twice groups once
            for combo in itertools.product(*(_sets(k) for k in keys))]
    if len(sets) > _MAX_SETS:
        raise Untranslatable(f"a GROUP BY of {len(sets)} grouping sets", ENGINE, HINT)
    order = select.args.get("order")
    if order is not None and any(is_aggregate(n) or isinstance(n, (exp.Grouping, exp.GroupingId))
                                 for n in order.walk()):
        raise Untranslatable("ORDER BY an aggregate or grouping() with CUBE or GROUPING SETS", ENGINE,
                             "order by an output column's name; " + HINT)
    every: dict[str, exp.Expr] = {}  # the grouping keys in order (grouping_id() without arguments)
    for s in sets:
        for k in s:
            every.setdefault(k.sql("spark"), k)
    names = [p.alias_or_name for p in select.expressions]
    branches = []
    for kept in sets:
        branches.append(_branch(select, {k.sql("spark") for k in kept}, kept, every, names))
    union: exp.Expr = branches[0]
    for branch in branches[1:]:
        union = exp.Union(this=union, expression=branch, distinct=False)
    outer = exp.select(exp.Star()).from_(exp.Subquery(this=union, alias=exp.TableAlias(
        this=exp.to_identifier("_grouping_sets"))))
    for key in ("order", "limit", "offset", "distinct", "with_"):
        if select.args.get(key) is not None:
            outer.set(key, select.args[key].copy())
    return outer


def _branch(select: exp.Select, kept: set[str], keys: list[exp.Expr], every: dict[str, exp.Expr],
            names: list[str]) -> exp.Select:
    branch = select.copy()
    for key in ("order", "limit", "offset", "distinct", "with_"):
        branch.set(key, None)
    branch.set("expressions", [p if isinstance(p, exp.Alias) else exp.alias_(p, n, quoted=True)
                               for p, n in zip(branch.expressions, names, strict=True)])
    dropped = set(every) - kept
    dropped_names = {e.split(".")[-1].lower() for e in dropped}

    def bit(arg: exp.Expr) -> int:
        text = arg.sql("spark")
        if text not in every:
            raise Untranslatable(f"grouping({text}) of an expression that is not a grouping key", ENGINE, HINT)
        return 0 if text in kept else 1

    def replaced(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Grouping):
            args = list(node.expressions) or [node.this]
            if len(args) != 1:
                raise Untranslatable("grouping() of other than one key", ENGINE, HINT)
            return exp.Cast(this=exp.Literal.number(bit(args[0])), to=exp.DataType.build("TINYINT"))  # Spark's type
        if isinstance(node, exp.GroupingId):
            args = list(node.expressions) if node.expressions else list(every.values())
            value = 0
            for arg in args:
                value = (value << 1) | bit(arg)
            return exp.Cast(this=exp.Literal.number(value), to=exp.DataType.build("BIGINT"))
        if is_aggregate(node) or isinstance(node, (exp.Select, exp.Subquery)):
            return node  # a row's value inside an aggregate
        text = node.sql("spark")
        if text in dropped or isinstance(node, exp.Column) and not node.table and node.name.lower() in dropped_names \
                and text not in kept:
            return exp.Null()
        for child in list(node.iter_expressions()):
            new = replaced(child)
            if new is not child:
                child.replace(new)
        return node

    branch.set("expressions", [exp.alias_(replaced(p.this), p.alias, quoted=True) for p in branch.expressions])
    if branch.args.get("having") is not None:
        branch.set("having", exp.Having(this=replaced(branch.args["having"].this)))
    branch.set("group", exp.Group(expressions=[k.copy() for k in keys]) if keys else None)
    if not keys:  # no rows, no group (a plain global aggregate would answer one row)
        rows = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
        having = branch.args.get("having")
        branch.set("having", exp.Having(this=exp.And(this=having.this, expression=rows) if having is not None
                                        else rows))
    return branch


_MAX_EXISTS = 2  # 2^n branches, each a scan of the input


def exists_branches(tree: exp.Expr) -> exp.Expr:
    """`SELECT x, EXISTS (SELECT … WHERE y = x) FROM t`: Daft plans EXISTS only in WHERE (in a select
    list its optimizer leaves it and fails). An EXISTS is never NULL, so the select is the UNION ALL
    of its rows where it holds (TRUE in its place) and where it does not (FALSE), each a WHERE that
    Daft turns into a semi or an anti join."""
    for select in reversed(list(tree.find_all(exp.Select))):
        found = [n for p in select.expressions for n in own_nodes(p)
                 if isinstance(n, exp.Exists) and isinstance(n.this, (exp.Select, exp.Subquery))]
        if not found:
            continue
        if len(found) > _MAX_EXISTS or select.args.get("group") is not None or select.args.get("having") is not None \
                or any(is_aggregate(n) or isinstance(n, exp.Window) for p in select.expressions for n in own_nodes(p)):
            raise Untranslatable("EXISTS (…) in a select list beside aggregates, windows or two other EXISTS",
                                 ENGINE, HINT)
        made = _exists_union(select, found)
        if select is tree:
            tree = made
        else:
            select.replace(made)
    return tree


def _exists_union(select: exp.Select, found: list[exp.Exists]) -> exp.Select:
    index = {id(n): i for i, n in enumerate(select.walk())}
    positions = [index[id(n)] for n in found]
    branches = []
    for holds in itertools.product((True, False), repeat=len(found)):
        branch = select.copy()
        nodes = list(branch.walk())  # as the select's, before any part goes
        for key in ("order", "limit", "offset", "distinct", "with_"):
            branch.set(key, None)
        conditions: list[exp.Expr] = []
        for position, value in zip(positions, holds, strict=True):
            node = nodes[position]
            test = node.copy()
            conditions.append(test if value else exp.Not(this=test))
            node.replace(exp.true() if value else exp.false())
        for condition in conditions:
            branch.where(condition, copy=False)
        branches.append(branch)
    union: exp.Expr = branches[0]
    for branch in branches[1:]:
        union = exp.Union(this=union, expression=branch, distinct=False)
    outer = exp.select(exp.Star()).from_(exp.Subquery(this=union, alias=exp.TableAlias(
        this=exp.to_identifier("_exists"))))
    for key in ("order", "limit", "offset", "distinct", "with_"):
        if select.args.get(key) is not None:
            outer.set(key, select.args[key].copy())
    return outer
