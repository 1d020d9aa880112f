"""Spark's windows in Daft's words (the cluster's translation, daft.py runs this after the rewrites).

Daft 0.7.26's windows differ from Spark's where it matters (measured against DuckDB's, which
the parity harness checks against Spark):

- an aggregate over a window with ORDER BY and no frame is the whole partition's in Daft; Spark's
  default frame is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, a running aggregate with
  the current row's peers. An explicit RANGE frame is read as ROWS (peers left out), or fails.
  ROWS frames agree, and so does RANGE over the whole partition: anything else is refused by name
  rather than answered otherwise;
- a window with ORDER BY and no PARTITION BY is refused for lag/lead and frames ("order by only"):
  it becomes one partition of everything (PARTITION BY 1), which is what Spark does too;
- percent_rank, cume_dist and ntile are missing: they are said with rank(), row_number() and the
  partition's row count, as Spark defines them (cume_dist counts the peers as rank() over the
  reversed order does, and so does a running count(*)); first_value and last_value are Daft's
  over a ROWS frame only.
"""
from __future__ import annotations

from sqlglot import exp

from console.kernel.sqlengines.daft_local import is_aggregate, own_nodes
from console.kernel.sqlengines.spark import Untranslatable, function_name

ENGINE = "the cluster (Daft)"
HINT = 'run it locally: set sql.engine = "local" where type="conf";'


def spark_windows(tree: exp.Expr) -> exp.Expr:
    """The statement with each window said so that Daft answers as Spark; Untranslatable for a
    frame Daft does not keep."""
    for window in list(tree.find_all(exp.Window)):
        fn = window.this
        if isinstance(fn, (exp.PercentRank, exp.CumeDist, exp.Ntile)):
            window.replace(_ranking(window))
            continue
        if isinstance(fn, (exp.FirstValue, exp.LastValue)):
            _first_last(window, fn)
        if _running_count(window):
            window.replace(_count_upto(window))
            continue
        _check_frame(window)
        _one_partition(window)
    return tree


def _running_count(window: exp.Window) -> bool:
    """count(*) (said as sum(1)) over Spark's default frame with ORDER BY: the rows up to the
    current one's last peer, which rank() over the reversed order counts."""
    fn = window.this
    return window.args.get("order") is not None and window.args.get("spec") is None and isinstance(fn, exp.Sum) \
        and isinstance(fn.this, exp.Literal) and fn.this.this == "1"


def _count_upto(window: exp.Window) -> exp.Expr:
    order = window.args["order"]
    rows = _bigint(_over(window, exp.Sum(this=_num(1)), None))
    after = _bigint(_over(window, exp.Rank(), exp.Order(expressions=[_reversed(o) for o in order.expressions])))
    return exp.Paren(this=exp.Add(this=exp.Sub(this=rows, expression=after), expression=_num(1)))


def _aggregate(fn: exp.Expr) -> bool:
    return is_aggregate(fn) or isinstance(fn, exp.Anonymous) and str(fn.name).lower() == "__collect"


def _check_frame(window: exp.Window) -> None:
    if window.args.get("order") is None or not _aggregate(window.this):
        return
    spec = window.args.get("spec")
    what = f"{_name(window.this)} over a window with ORDER BY"
    if spec is None:
        raise Untranslatable(what + " and Spark's default frame (a running aggregate with the row's peers)", ENGINE,
                             "Daft aggregates the whole partition there; a ROWS frame (ROWS BETWEEN UNBOUNDED "
                             "PRECEDING AND CURRENT ROW, the same when the order has no ties) runs on the "
                             "cluster; " + HINT)
    whole = spec.args.get("start") == "UNBOUNDED" and spec.args.get("end") == "UNBOUNDED"
    if str(spec.args.get("kind") or "").upper() == "RANGE" and not whole:
        raise Untranslatable(what + " and a RANGE frame", ENGINE, "Daft reads a RANGE frame as ROWS; " + HINT)


def _first_last(window: exp.Window, fn: exp.Expr) -> None:
    """first_value/last_value over an ordered frame of rows: Daft's (daft_udf attaches them to its SQL
    as `__first_value`/`__last_value`). Spark's default frame starts at the partition's first row,
    so first_value's is said as ROWS; last_value's ends at the current row's last peer, which no
    ROWS frame says."""
    name = function_name(fn)
    spec = window.args.get("spec")
    if window.args.get("order") is None or not isinstance(fn.this, exp.Expr) or fn.expressions:
        raise Untranslatable(f"{name}() without ORDER BY or with IGNORE NULLS", ENGINE, HINT)
    if spec is None:
        if isinstance(fn, exp.LastValue):
            raise Untranslatable(f"{name}() over Spark's default frame (up to the row's last peer)", ENGINE,
                                 "a ROWS frame (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) runs on the "
                                 "cluster; " + HINT)
        window.set("spec", exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING",
                                          end="CURRENT ROW"))
    elif str(spec.args.get("kind") or "").upper() == "RANGE":
        if not (spec.args.get("start") == "UNBOUNDED" and spec.args.get("end") == "UNBOUNDED"):
            raise Untranslatable(f"{name}() over a RANGE frame", ENGINE, "Daft reads a RANGE frame as ROWS; " + HINT)
        spec.set("kind", "ROWS")  # the whole partition either way
    window.set("this", exp.Anonymous(this=f"__{name}", expressions=[fn.this]))


def _name(fn: exp.Expr) -> str:
    if isinstance(fn, exp.Anonymous):
        return "this aggregate"  # one DuckDB computes (daft_duck.py): its name is gone by now
    if isinstance(fn, exp.Sum) and isinstance(fn.this, exp.Literal) and fn.this.this == "1":
        return "count(*)"  # as the rewrites say count(*) over a window (sum(1) counts the same)
    return f"{function_name(fn)}()"


def _one_partition(window: exp.Window) -> None:
    """ORDER BY without PARTITION BY: all rows in one partition, as Spark moves them."""
    if window.args.get("order") is not None and not window.args.get("partition_by"):
        window.set("partition_by", [exp.Literal.number(1)])


def _over(window: exp.Window, fn: exp.Expr, order: exp.Order | None) -> exp.Window:
    partition = [p.copy() for p in window.args.get("partition_by") or []] or [exp.Literal.number(1)]
    return exp.Window(this=fn, partition_by=partition, order=order.copy() if order is not None else None)


def _double(node: exp.Expr) -> exp.Expr:
    return exp.Cast(this=node, to=exp.DataType.build("DOUBLE"))


def _bigint(node: exp.Expr) -> exp.Expr:
    return exp.Cast(this=node, to=exp.DataType.build("BIGINT"))


def _num(n: int | float) -> exp.Expr:
    return exp.Literal.number(n)


def _ranking(window: exp.Window) -> exp.Expr:
    fn = window.this
    order = window.args.get("order")
    if order is None:
        raise Untranslatable(f"{function_name(fn)}() without ORDER BY", ENGINE, HINT)
    rows = _over(window, exp.Sum(this=_num(1)), None)  # the partition's row count
    if isinstance(fn, exp.PercentRank):  # (rank - 1) / (n - 1), 0 for a partition of one row
        rank = _double(_over(window, exp.Rank(), order))
        ratio = exp.Div(this=exp.Paren(this=exp.Sub(this=rank, expression=_num(1.0))),
                        expression=exp.Paren(this=exp.Sub(this=_double(rows.copy()), expression=_num(1.0))))
        return exp.Paren(this=exp.case().when(exp.GT(this=rows, expression=_num(1)), ratio).else_(_num(0.0)))
    if isinstance(fn, exp.CumeDist):  # rows before or peer / n: n - (rank over the reversed order) + 1
        reversed_order = exp.Order(expressions=[_reversed(o) for o in order.expressions])
        after = _double(_over(window, exp.Rank(), reversed_order))
        upto = exp.Add(this=exp.Sub(this=_double(rows.copy()), expression=after), expression=_num(1.0))
        return exp.Div(this=exp.Paren(this=upto), expression=_double(rows))
    return _ntile(window, fn, order, rows)


def _reversed(ordered: exp.Expr) -> exp.Ordered:
    if not isinstance(ordered, exp.Ordered):
        ordered = exp.Ordered(this=ordered, nulls_first=True)
    return exp.Ordered(this=ordered.this.copy(), desc=not ordered.args.get("desc"),
                       nulls_first=not ordered.args.get("nulls_first"))


def _ntile(window: exp.Window, fn: exp.Expr, order: exp.Order, rows: exp.Window) -> exp.Expr:
    """Spark's NTile: n rows in b buckets of n div b rows, the first n mod b of them one row more."""
    buckets = fn.this
    if not (isinstance(buckets, exp.Literal) and not buckets.is_string and str(buckets.this).isdigit()
            and int(buckets.this) > 0):
        raise Untranslatable("ntile() of anything but a positive whole number", ENGINE, HINT)
    b = int(buckets.this)
    r = _bigint(_over(window, exp.RowNumber(), order))
    n = _bigint(rows)
    size = exp.IntDiv(this=n.copy(), expression=_num(b))  # q = n div b
    rest = exp.Sub(this=n.copy(), expression=exp.Mul(this=exp.Paren(this=size.copy()), expression=_num(b)))  # n mod b
    big = exp.Paren(this=exp.Add(this=size.copy(), expression=_num(1)))  # q + 1 rows in the first buckets
    first = exp.LTE(this=r.copy(), expression=exp.Mul(this=exp.Paren(this=rest.copy()), expression=big.copy()))
    in_first = exp.Add(this=exp.IntDiv(this=exp.Paren(this=exp.Sub(this=r.copy(), expression=_num(1))),
                                       expression=big), expression=_num(1))
    # Daft computes both branches: the divisor is never 0 (q is 0 only where every row takes the first)
    divisor = exp.Paren(this=exp.case().when(exp.EQ(this=size.copy(), expression=_num(0)), _num(1)).else_(size))
    later = exp.Sub(this=exp.Sub(this=r, expression=_num(1)), expression=exp.Paren(this=rest))
    in_later = exp.Add(this=exp.IntDiv(this=exp.Paren(this=later), expression=divisor), expression=_num(1))
    bucket = exp.case().when(first, in_first).else_(in_later)
    return exp.Cast(this=bucket, to=exp.DataType.build("INT"))


def partition_aggregates(tree: exp.Expr) -> exp.Expr:
    """An aggregate DuckDB computes over a whole partition (`percentile(x, 0.5) OVER (PARTITION BY
    p)`, after daft_duck.place: `__duck(__collect(x) OVER (PARTITION BY p))`) as a join of its
    groups: Daft would hand every row a list of its partition's rows (quadratic), where a grouped
    select hands DuckDB each partition once, and the rows take their partition's answer by its
    keys (NULL keys matching, as a partition's). Over a grouping's rows (an aggregate's window)
    the lists stay: there are as many as groups."""
    count = 0
    for select in reversed(list(tree.find_all(exp.Select))):
        calls = [w for p in select.expressions for w in own_nodes(p) if _collected_window(w)]
        if not calls or select.args.get("group") is not None or select.args.get("having") is not None \
                or any(_own_aggregate(p) for p in select.expressions) or select.args.get("from_") is None:
            continue
        added: list[str] = []
        for window in calls:
            name = f"__partition_{count}"
            count += 1
            keys = [k for k in window.args.get("partition_by") or []]
            duck = window.parent
            assert isinstance(duck, exp.Anonymous)
            inner = exp.Select(expressions=[exp.alias_(k.copy(), f"{name}_k{i}") for i, k in enumerate(keys)]
                               + [exp.alias_(exp.Anonymous(this=duck.this, expressions=[window.this.copy()]),
                                             f"{name}_r")])
            for key in ("from_", "joins", "where"):
                if select.args.get(key) is not None:
                    inner.set(key, select.args[key].copy())
            if keys:
                inner.set("group", exp.Group(expressions=[k.copy() for k in keys]))
            grouped = exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(name)))
            if keys:
                on: exp.Expr = exp.NullSafeEQ(this=keys[0].copy(), expression=exp.column(f"{name}_k0", table=name))
                for i, k in enumerate(keys[1:], start=1):
                    on = exp.And(this=on, expression=exp.NullSafeEQ(this=k.copy(),
                                                                   expression=exp.column(f"{name}_k{i}", table=name)))
                join = exp.Join(this=grouped, side="LEFT", on=on)
            else:  # OVER (): one row, every row's
                join = exp.Join(this=grouped, kind="CROSS")
            select.set("joins", [*(select.args.get("joins") or []), join])
            duck.replace(exp.column(f"{name}_r", table=name))
            added += [f"{name}_k{i}" for i in range(len(keys))] + [f"{name}_r"]
        for proj in select.expressions:  # SELECT *: the rows' own columns only
            if isinstance(proj, exp.Star):
                proj.set("except_", [*(proj.args.get("except_") or []), *(exp.column(a) for a in added)])
    return tree



def _collected_window(node: exp.Expr) -> bool:
    """`__duck(__collect(…) OVER (PARTITION BY …))`: no ORDER BY, no frame."""
    return isinstance(node, exp.Window) and isinstance(node.this, exp.Anonymous) \
        and str(node.this.name).lower() == "__collect" and node.args.get("order") is None \
        and node.args.get("spec") is None and isinstance(node.parent, exp.Anonymous) \
        and str(node.parent.name).lower().startswith("__duck_") and len(node.parent.expressions) == 1


def _own_aggregate(node: exp.Expr) -> bool:
    """An aggregate of the select's own (outside any window): the select groups."""
    for n in own_nodes(node):
        if (is_aggregate(n) or isinstance(n, exp.Anonymous) and str(n.name).lower() == "__collect") \
                and n.find_ancestor(exp.Window) is None:
            return True
    return False
