"""Reshapes of a cluster select that Daft's SQL needs (daft.py runs them):

- a statement's VALUES become inline tables, `__values_<n>`, which the driver makes with DuckDB
  as the local engine reads them (their types too: Daft SQL has no VALUES);
- a grouped select whose DuckDB functions (daft_duck.py) take an aggregate is split in two:
  Daft runs no function over an aggregate in the same select, so the inner select groups and
  aggregates, and the outer one computes the rest over its rows (HAVING becomes its WHERE);
- UNION branches named as the first, EXCEPT as an anti join (align_unions, except_joins).
"""
from __future__ import annotations

from sqlglot import exp

from console.kernel.sqlengines.daft_duck import ENGINE, is_aggregate
from console.kernel.sqlengines.daft_local import local_sql, own_nodes
from console.kernel.sqlengines.spark import Untranslatable

_HINT = 'run it locally: set sql.engine = "local" where type="conf";'


# Functions that make rows (Spark's generators): from constants, DuckDB makes their rows.
_GENERATORS = (exp.Explode, exp.Inline, exp.Unnest)
_GENERATOR_NAMES = {"stack", "inline", "inline_outer", "json_tuple"}


def _generates(node: exp.Expr) -> bool:
    return isinstance(node, _GENERATORS) or isinstance(node, exp.Anonymous) and str(node.name).lower() in \
        _GENERATOR_NAMES


def constant_generator(node: exp.Expr) -> bool:
    """A generator of constants in FROM (`posexplode(array(1, 2))`): rows of the statement's own."""
    return _generates(node) and not any(isinstance(n, (exp.Column, exp.Select)) for n in node.walk())


def inline_values(tree: exp.Expr) -> tuple[exp.Expr, dict[str, str]]:
    """(the statement with each VALUES as a table, each table's DuckDB SQL by name). So are a
    generator of constants in FROM (`FROM posexplode(array(1, 2))`) and a select without FROM
    that generates rows (`SELECT posexplode(array(1, 2))`): DuckDB makes their few rows."""
    out: dict[str, str] = {}

    def table_for(node: exp.Expr, statement: exp.Expr, alias: exp.Expr | None) -> exp.Table:
        name = f"__values_{len(out)}"
        out[name] = local_sql(statement, frozenset(), node)
        table = exp.Table(this=exp.to_identifier(name))
        if alias is not None and alias.name:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias.name)))
        return table

    for select in reversed(list(tree.find_all(exp.Select))):
        if select.args.get("from_") is None and any(_generates(n) for p in select.expressions for n in p.walk()):
            made = exp.select(exp.Star()).from_(table_for(select, select.copy(), None))
            if select is tree:
                tree = made
            else:
                select.replace(made)
    for table in list(tree.find_all(exp.Table)):
        if constant_generator(table.this):
            alias = table.args.get("alias")
            table.replace(table_for(table.this, exp.select(exp.Star()).from_(table.copy()), alias))
    for values in list(tree.find_all(exp.Values)):
        alias = values.args.get("alias")
        table = table_for(values, exp.select(exp.Star()).from_(values.copy()), alias)
        if values is tree:  # a bare VALUES statement
            return exp.select(exp.Star()).from_(table), out
        values.replace(table)
    return tree, out


def split_groups(tree: exp.Expr) -> exp.Expr:
    """Each grouped select with a DuckDB function after its grouping, split in two (innermost
    first); one with a DuckDB function inside an aggregate or a GROUP BY key computes it in a
    select below."""
    for select in reversed(list(tree.find_all(exp.Select))):
        reshaped = _before(select) if _needs_before(select) else select
        if _needs_split(reshaped):
            reshaped = _split(reshaped)
        if reshaped is not select:
            if select is tree:
                tree = reshaped
            else:
                select.replace(reshaped)
    return tree


def _grouping(select: exp.Select) -> bool:
    return select.args.get("group") is not None or any(
        _is_collected(n) and not _in_window(n, part) for part in _post_aggregate(select) for n in own_nodes(part))


def _parts(select: exp.Select) -> list[exp.Expr]:
    group = select.args.get("group")
    return _post_aggregate(select) + ([group] if group is not None else [])


def _early(node: exp.Expr, part: exp.Expr) -> bool:
    """A DuckDB function read before the grouping: inside an aggregate, or in a GROUP BY key."""
    return _duck(node) and (isinstance(part, exp.Group) or _inside_aggregate(node, part))


def _needs_before(select: exp.Select) -> bool:
    return _grouping(select) and any(_early(n, part) for part in _parts(select) for n in own_nodes(part))


def _before(select: exp.Select) -> exp.Select:
    """Daft runs no function inside an aggregation: a select below computes the DuckDB functions
    read before the grouping (`_p0`, …) beside the columns the select reads (`_c0`, …)."""
    aliases = {p.alias.lower() for p in select.expressions if isinstance(p, exp.Alias)}
    early: dict[str, str] = {}
    columns: dict[str, str] = {}
    for part in _parts(select):
        for n in own_nodes(part):
            if _early(n, part) and not any(_early(a, part) for a in _ancestry(n, part)):
                early.setdefault(n.sql("spark"), f"_p{len(early)}")
            elif isinstance(n, exp.Column) and (n.table or str(n.name).lower() not in aliases):
                columns.setdefault(n.sql("spark"), f"_c{len(columns)}")
    sources = {**early, **columns}
    below = exp.Select(expressions=[exp.alias_(_find(select, t), n) for t, n in sources.items()])
    for key in ("from_", "joins", "laterals", "where"):
        if select.args.get(key) is not None:
            below.set(key, select.args[key].copy())
    above = select.copy()
    for key in ("joins", "laterals", "where"):
        above.set(key, None)
    alias = exp.TableAlias(this=exp.to_identifier("_below"))
    above.set("from_", exp.From(this=exp.Subquery(this=below, alias=alias)))

    def replaced(n: exp.Expr) -> exp.Expr:
        name = sources.get(n.sql("spark")) if _duck(n) or isinstance(n, exp.Column) else None
        if name is not None:
            return exp.column(name)
        for child in list(n.iter_expressions()):
            if not isinstance(child, (exp.Select, exp.Subquery)):
                new = replaced(child)
                if new is not child:
                    child.replace(new)
        return n

    projections = []
    for proj in above.expressions:
        if isinstance(proj, exp.Star):
            raise Untranslatable("SELECT * with GROUP BY around a function DuckDB computes", ENGINE, _HINT)
        new = replaced(proj)
        projections.append(new if isinstance(new, exp.Alias) else exp.alias_(new, proj.alias_or_name, quoted=True))
    above.set("expressions", projections)
    for key in ("group", "having", "order"):
        if above.args.get(key) is not None:
            above.set(key, replaced(above.args[key]))
    return above


def _find(select: exp.Select, text: str) -> exp.Expr:
    """A copy of the node of the select's own whose text this is."""
    for part in _parts(select):
        for n in own_nodes(part):
            if n.sql("spark") == text:
                return n.copy()
    raise KeyError(text)


def _ancestry(node: exp.Expr, stop: exp.Expr) -> list[exp.Expr]:
    out = []
    parent = node.parent
    while parent is not None and parent is not stop:
        out.append(parent)
        parent = parent.parent
    return out



def _post_aggregate(select: exp.Select) -> list[exp.Expr]:
    parts: list[exp.Expr] = list(select.expressions)
    if select.args.get("having") is not None:
        parts.append(select.args["having"])
    if select.args.get("order") is not None:
        parts.append(select.args["order"])
    return parts


def _is_collected(node: exp.Expr) -> bool:
    return is_aggregate(node) or isinstance(node, exp.Anonymous) and str(node.name).lower() == "__collect"


def _duck(node: exp.Expr) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.name).lower().startswith("__duck_")


def _needs_split(select: exp.Select) -> bool:
    """A DuckDB function after the grouping (over an aggregate or a key): Daft's aggregation runs none."""
    return _grouping(select) and any(_duck(n) and not _inside_aggregate(n, part) and not _in_window(n, part)
                                     for part in _post_aggregate(select) for n in own_nodes(part))


def _in_window(node: exp.Expr, stop: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None and parent is not stop:
        if isinstance(parent, exp.Window):
            return True
        parent = parent.parent
    return False


def _split(select: exp.Select) -> exp.Select:
    group = select.args.get("group")
    if group is not None and any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
        raise Untranslatable("ROLLUP, CUBE or GROUPING SETS around a function DuckDB computes", ENGINE, _HINT)
    keys = list(group.expressions) if group is not None else []
    aggregates: dict[str, tuple[str, exp.Expr]] = {}
    for part in _post_aggregate(select):
        for node in own_nodes(part):
            if _is_collected(node) and not _in_window(node, part) and not _inside_aggregate(node, part):
                aggregates.setdefault(node.sql("spark"), (f"_g{len(aggregates)}", node))
    by_key = {k.sql("spark"): f"_k{i}" for i, k in enumerate(keys)}
    by_column = {str(k.name).lower(): f"_k{i}" for i, k in enumerate(keys) if isinstance(k, exp.Column)}

    def replaced(n: exp.Expr) -> exp.Expr:
        text = n.sql("spark")
        name = aggregates[text][0] if text in aggregates and _is_collected(n) else by_key.get(text)
        if name is None and isinstance(n, exp.Column):
            name = by_column.get(str(n.name).lower())
        if name is not None:
            return exp.column(name)
        for child in list(n.iter_expressions()):
            new = replaced(child)
            if new is not child:
                child.replace(new)
        return n

    def outside(node: exp.Expr) -> exp.Expr:
        return replaced(node.copy())

    inner = exp.Select(expressions=[exp.alias_(k.copy(), f"_k{i}") for i, k in enumerate(keys)]
                       + [exp.alias_(node.copy(), name) for name, node in aggregates.values()])
    for key in ("from_", "joins", "laterals", "where"):
        if select.args.get(key) is not None:
            inner.set(key, select.args[key].copy())
    if keys:
        inner.set("group", exp.Group(expressions=[k.copy() for k in keys]))
    projections = []
    for proj in select.expressions:
        if isinstance(proj, exp.Star):
            raise Untranslatable("SELECT * with GROUP BY around a function DuckDB computes", ENGINE, _HINT)
        body = proj.this if isinstance(proj, exp.Alias) else proj
        projections.append(exp.alias_(outside(body), proj.alias_or_name, quoted=True))
    outer = exp.Select(expressions=projections)
    grouped = exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("_grouped")))
    outer.set("from_", exp.From(this=grouped))
    if select.args.get("having") is not None:
        outer.set("where", exp.Where(this=outside(select.args["having"].this)))
    if select.args.get("order") is not None:
        outer.set("order", outside(select.args["order"]))
    for key in ("limit", "offset", "distinct", "with_"):
        if select.args.get(key) is not None:
            outer.set(key, select.args[key].copy())
    return outer


def _inside_aggregate(node: exp.Expr, stop: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None and parent is not stop:
        if _is_collected(parent):
            return True
        parent = parent.parent
    return False


def align_unions(tree: exp.Expr) -> None:
    """Daft matches a UNION's branches by column name, Spark by position: each later branch's
    columns take the first branch's names."""
    for union in tree.find_all(exp.Union):
        names = _names(union.this)
        if names is None:
            continue
        branch = union.expression
        while isinstance(branch, exp.Subquery):
            branch = branch.this
        if isinstance(branch, exp.Select) and len(branch.expressions) == len(names) and \
                not any(isinstance(p, exp.Star) for p in branch.expressions):
            branch.set("expressions", [exp.alias_(p.this if isinstance(p, exp.Alias) else p, n, quoted=True)
                                       for p, n in zip(branch.expressions, names, strict=True)])


def except_joins(tree: exp.Expr) -> exp.Expr:
    """`a EXCEPT b` (Daft's SQL has no EXCEPT) as the distinct rows of `a` that no row of `b`
    matches, column by column in order, NULL matching NULL (Spark's EXCEPT): an anti join on <=>."""
    for node in reversed(list(tree.find_all(exp.Except))):
        if not node.args.get("distinct"):
            raise Untranslatable("EXCEPT ALL", ENGINE, "Daft has no EXCEPT ALL; " + _HINT)
        left, right = _names(node.this), _names(node.expression)
        branch = node.expression
        while isinstance(branch, exp.Subquery):
            branch = branch.this
        if right is not None and isinstance(branch, exp.Select):  # its names do not matter: its positions do
            branch.set("expressions", [exp.alias_(p.this if isinstance(p, exp.Alias) else p, f"_c{i}")
                                       for i, p in enumerate(branch.expressions)])
            right = [f"_c{i}" for i in range(len(branch.expressions))]
        if left is None or right is None or len(left) != len(right) or len(set(left)) != len(left) \
                or len(set(right)) != len(right):
            raise Untranslatable("EXCEPT of SELECT * or of a repeated column name", ENGINE, _HINT)
        on: exp.Expr | None = None
        for a, b in zip(left, right, strict=True):
            match = exp.NullSafeEQ(this=exp.column(a, table="_except_l", quoted=True),
                                   expression=exp.column(b, table="_except_r", quoted=True))
            on = match if on is None else exp.And(this=on, expression=match)

        def side(query: exp.Expr, alias: str) -> exp.Subquery:
            inner = query.this if isinstance(query, exp.Subquery) else query
            return exp.Subquery(this=inner.copy(), alias=exp.TableAlias(this=exp.to_identifier(alias)))

        kept = exp.Select(expressions=[exp.alias_(exp.column(a, table="_except_l", quoted=True), a, quoted=True)
                                       for a in left], distinct=exp.Distinct())
        kept.set("from_", exp.From(this=side(node.this, "_except_l")))
        kept.set("joins", [exp.Join(this=side(node.expression, "_except_r"), kind="ANTI", on=on)])
        # sorted and cut after DISTINCT (Daft's DISTINCT does not keep an order of the same select)
        made = exp.Select(expressions=[exp.column(a, quoted=True) for a in left])
        made.set("from_", exp.From(this=exp.Subquery(this=kept, alias=exp.TableAlias(
            this=exp.to_identifier("_except")))))
        for key in ("order", "limit", "offset", "with_"):
            if node.args.get(key) is not None:
                made.set(key, node.args[key].copy())
        if node is tree:
            tree = made
        else:
            node.replace(made)
    return tree


def _names(query: exp.Expr) -> list[str] | None:
    while isinstance(query, exp.Subquery):
        query = query.this
    if isinstance(query, exp.Union):
        return _names(query.this)
    if not isinstance(query, exp.Select) or any(p.is_star for p in query.expressions):
        return None
    return [p.alias_or_name for p in query.expressions]


def guard_global_aggregates(tree: exp.Expr) -> None:
    """A global aggregate in FROM answers one row, even over no rows; Daft 0.7.26 loses that row
    when the outer select reads none of its columns (`SELECT 1 FROM (SELECT count(1) … WHERE
    false)` gives no row). A predicate that holds for every row keeps the column read."""
    for subquery in list(tree.find_all(exp.Subquery)):
        inner = subquery.this
        outer = subquery.parent.parent if isinstance(subquery.parent, (exp.From, exp.Join)) else None
        if not isinstance(inner, exp.Select) or not isinstance(outer, exp.Select) or inner.args.get("group") \
                or not any(is_aggregate(n) for p in inner.expressions for n in own_nodes(p)):
            continue
        first = inner.expressions[0].alias_or_name if inner.expressions else ""
        if not first or not subquery.alias:
            continue
        column = exp.column(first, table=subquery.alias, quoted=True)
        holds = exp.Paren(this=exp.Or(this=exp.Is(this=column, expression=exp.Null()),
                                      expression=exp.Not(this=exp.Is(this=column.copy(), expression=exp.Null()))))
        outer.where(holds, copy=False)
