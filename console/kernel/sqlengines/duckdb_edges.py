"""Spark's answers at the edges where DuckDB's differ (parity harness, tests/spark): NaN's sign,
regr_r2 of a constant, array_except's NULL and order, Spark's bitmap layout, a mode() tie and a
collect_set of texts (whose order is Spark's hash order: both refused at run time rather than
answered in another order), dates subtracted, a struct as text, a SMALLINT negated.

`rewrite(node)` returns the node's replacement, or None to leave it to the other rewrites;
runs before them (duckdb.py).
"""
from __future__ import annotations

import json

from sqlglot import exp

from console.kernel.sqlengines.duckdb_folds import fold, wrap
from console.kernel.sqlengines.spark import Untranslatable

ENGINE = "DuckDB"
_FLOATING = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)
_WIDTH = {exp.DataType.Type.TINYINT: 8, exp.DataType.Type.SMALLINT: 16, exp.DataType.Type.INT: 32,
          exp.DataType.Type.BIGINT: 64}
_MAPS = (exp.Map, exp.VarMap)


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _s(text: str) -> exp.Expr:
    return exp.Literal.string(text)


def _lambda(body: exp.Expr, *names: str) -> exp.Lambda:
    return exp.Lambda(this=body, expressions=[exp.to_identifier(n) for n in names])


def _col(name: str) -> exp.Expr:
    return exp.column(exp.to_identifier(name))


def _refused_when(cond: exp.Expr, answer: exp.Expr, message: str) -> exp.Expr:
    """The answer, or a statement error saying `message` where `cond` holds (a run-time refusal:
    only the rows' values tell whether Spark's answer would differ)."""
    return exp.Paren(this=exp.case().when(cond, _fn("ERROR", _s(message))).else_(answer))


def _sign(node: exp.Sign) -> exp.Expr | None:
    """sign(NaN) is NaN in Spark (Java's Math.signum); DuckDB gives 0."""
    value = node.this
    if not (isinstance(value, (exp.Cast, exp.TryCast)) and value.to.this in _FLOATING):
        return None
    return exp.Paren(this=exp.case().when(exp.func("ISNAN", value.copy()), value.copy()).else_(node))


def _regr_r2(node: exp.RegrR2) -> exp.Expr | None:
    """regr_r2(y, x) is NULL where y is constant in Spark (DuckDB: 1), and where it divides by zero."""
    if isinstance(node.parent, exp.Window):
        return None
    constant = exp.EQ(this=_fn("REGR_SYY", node.this.copy(), node.expression.copy()), expression=exp.Literal.number(0))
    return exp.Paren(this=exp.case().when(exp.or_(constant, exp.func("ISNAN", node.copy())), exp.Null()).else_(node))


def _array_except(node: exp.ArrayExcept) -> exp.Expr:
    """array_except keeps the first of each value of the first array that the second lacks, in
    order, NULL included (DuckDB drops NULL, and its order is not the array's)."""
    xs, ys = node.this, node.expression
    same_x = exp.NullSafeEQ(this=_col("_y"), expression=_col("_x"))
    earlier = exp.Bracket(this=xs.copy(), expressions=[exp.Slice(this=exp.Literal.number(1), expression=exp.Paren(
        this=exp.Sub(this=_col("_i"), expression=exp.Literal.number(1))))])
    first = exp.EQ(this=_fn("LEN", _fn("LIST_FILTER", earlier, _lambda(same_x.copy(), "_y"))),
                   expression=exp.Literal.number(0))
    absent = exp.EQ(this=_fn("LEN", _fn("LIST_FILTER", ys.copy(), _lambda(same_x.copy(), "_y"))),
                    expression=exp.Literal.number(0))
    kept = _fn("LIST_FILTER", xs.copy(), _lambda(exp.and_(first, absent), "_x", "_i"))
    either_null = exp.or_(exp.Is(this=xs.copy(), expression=exp.Null()), exp.Is(this=ys.copy(), expression=exp.Null()))
    return exp.Paren(this=exp.case().when(either_null, exp.Null()).else_(kept))


def _bitmap(node: exp.BitmapConstructAgg) -> exp.Expr | None:
    """Spark's bitmap is 4096 bytes, bit p in byte p / 8 at p % 8 from the low end (sqlglot writes
    another engine's layout)."""
    if isinstance(node.parent, exp.Window):
        return None
    positions = exp.func("COALESCE", _fn("LIST", node.this.copy()), exp.Array(expressions=[]))
    in_byte = exp.EQ(this=exp.IntDiv(this=_col("_p"), expression=exp.Literal.number(8)), expression=_col("_b"))
    bits = _fn("LIST_TRANSFORM", _fn("LIST_FILTER", _fn("LIST_DISTINCT", positions), _lambda(in_byte, "_p")),
               _lambda(exp.BitwiseLeftShift(this=exp.Literal.number(1), expression=exp.Mod(
                   this=_col("_p"), expression=exp.Literal.number(8))), "_p"))
    byte = _fn("PRINTF", _s("%02X"), exp.func("COALESCE", _fn("LIST_SUM", bits), exp.Literal.number(0)))
    hexed = _fn("ARRAY_TO_STRING", _fn("LIST_TRANSFORM", _fn("RANGE", exp.Literal.number(4096)), _lambda(byte, "_b")),
                _s(""))
    return _fn("UNHEX", hexed)


def _mode(node: exp.Mode) -> exp.Expr | None:
    """mode() of a tie: Spark takes the first of its hash map, which DuckDB cannot follow."""
    if isinstance(node.parent, exp.Window) or node.expressions:
        return None
    counts = _fn("MAP_VALUES", _fn("HISTOGRAM", node.this.copy()))
    top = _fn("LIST_MAX", counts.copy())
    ties = _fn("LEN", _fn("LIST_FILTER", counts, _lambda(exp.EQ(this=_col("_c"), expression=top), "_c")))
    return _refused_when(exp.GT(this=ties, expression=exp.Literal.number(1)), node,
                         "mode() of a tie is not supported on DuckDB: Spark picks one by its hash order")


def _collect_set(node: exp.ArrayUniqueAgg) -> exp.Expr | None:
    """collect_set's order is unspecified in Spark and DuckDB's varies run to run, so it is
    sorted; for several texts Spark's hash order differs from any sort, so that is refused."""
    if isinstance(node.parent, (exp.Window, exp.Filter)):
        return None
    answer = exp.func("COALESCE", _fn("LIST_SORT", node.copy()), exp.Array(expressions=[]))
    texts = exp.EQ(this=exp.func("TYPEOF", _fn("ANY_VALUE", node.this.copy())), expression=_s("VARCHAR"))
    several = exp.GT(this=exp.func("COUNT", exp.Distinct(expressions=[node.this.copy()])),
                     expression=exp.Literal.number(1))
    return _refused_when(exp.and_(texts, several), answer,
                         "collect_set of several texts is not supported on DuckDB: Spark orders them by its hash")


def _dated(node: exp.Expr) -> bool:
    return ((isinstance(node, (exp.Cast, exp.TryCast)) and node.to.this == exp.DataType.Type.DATE)
            or isinstance(node, (exp.TsOrDsToDate, exp.CurrentDate)))


def _days_between(node: exp.Sub) -> exp.Expr | None:
    """date - date is an interval of days in Spark (DuckDB: a whole number)."""
    if not (_dated(node.this) and _dated(node.expression)):
        return None
    return _fn("TO_DAYS", exp.Cast(this=node, to=exp.DataType.build("INT")))


def _date_sequence(node: exp.GenerateSeries) -> exp.Expr | None:
    """sequence of dates stepped by an interval stays dates in Spark (DuckDB: timestamps)."""
    if not (_dated(node.args["start"]) and isinstance(node.args.get("step"), exp.Interval)):
        return None
    return exp.Cast(this=node, to=exp.DataType.build("DATE[]"))


def _struct_text(node: exp.Cast) -> exp.Expr | None:
    """CAST(named_struct('x', 1, 'y', 'b') AS STRING) is {1, b} in Spark: the values only, NULL as
    null. Only for whole numbers, text and booleans written in the statement."""
    struct = node.this
    if not (isinstance(struct, exp.Struct) and node.to.this in (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)
            and all(isinstance(e, exp.PropertyEQ) for e in struct.expressions)):
        return None
    values = [e.expression for e in struct.expressions]
    if not all(isinstance(v, (exp.Null, exp.Boolean)) or (isinstance(v, exp.Literal) and (v.is_string or v.is_int))
               for v in values):
        return None
    texts = [_s("null") if isinstance(v, exp.Null) else _s(str(v.this).lower() if isinstance(v, exp.Boolean)
                                                            else str(v.this)) for v in values]
    return _s("{" + ", ".join(str(t.this) for t in texts) + "}")


def _negated(node: exp.Expr) -> exp.Expr | None:
    """-x of a whole-number literal of a type wraps in Spark (-(-32768S) is -32768); DuckDB widens."""
    inner = node.this
    if not (isinstance(inner, (exp.Cast, exp.TryCast)) and inner.to.this in _WIDTH):
        return None
    value, sign = inner.this, 1
    if isinstance(value, exp.Neg):  # a negative literal is written as -(n)
        value, sign = value.this, -1
    if not (isinstance(value, exp.Literal) and not value.is_string and value.is_int):
        return None
    return type(inner)(this=exp.Literal.number(wrap(-sign * int(value.this), _WIDTH[inner.to.this])), to=inner.to)


def _from_json(node: exp.FromJson) -> exp.Expr | None:
    """from_json of malformed JSON into a nested schema: Spark keeps the fields read before the
    fault (DuckDB: all NULL)."""
    text, schema = node.this, node.expression
    if not (isinstance(text, exp.Literal) and text.is_string and isinstance(schema, exp.Literal)):
        return None
    try:
        json.loads(text.this)
        return None
    except ValueError:
        # a record with a fault inside (not an empty or wholly foreign text, which Spark reads as NULL)
        nested = any(w in str(schema.this).upper() for w in ("ARRAY<", "STRUCT<", "MAP<"))
        if text.this.lstrip()[:1] in ("{", "[") and nested:
            raise Untranslatable("from_json of malformed JSON into a nested schema", ENGINE,
                                 "Spark keeps the fields it read before the fault") from None
    return None


def _to_json(node: exp.JSONFormat) -> exp.Expr | None:
    for m in node.this.find_all(*_MAPS):
        values = m.args.get("values")
        if isinstance(values, exp.Array) and any(
                isinstance(v, exp.Struct) and any(isinstance(p.expression, exp.Null) for p in v.expressions)
                for v in values.expressions):
            raise Untranslatable("to_json of a map of structs with NULL fields", ENGINE,
                                 "Spark leaves those fields out of each value")
    return None


def rewrite(node: exp.Expr) -> exp.Expr | None:
    replaced = _rewrite(node)
    if replaced is not None and isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
        # a column keeps the name DuckDB gave the expression (a folded literal would be named by its value)
        return exp.alias_(replaced, node.sql(dialect="duckdb"), quoted=True)
    return replaced


def _rewrite(node: exp.Expr) -> exp.Expr | None:
    folded = fold(node)
    if folded is not None:
        return folded
    if isinstance(node, exp.Sign):
        return _sign(node)
    if isinstance(node, exp.RegrR2):
        return _regr_r2(node)
    if isinstance(node, exp.ArrayExcept):
        return _array_except(node)
    if isinstance(node, exp.BitmapConstructAgg):
        return _bitmap(node)
    if isinstance(node, exp.Mode):
        return _mode(node)
    if isinstance(node, exp.ArrayUniqueAgg):
        return _collect_set(node)
    if isinstance(node, exp.Sub):
        return _days_between(node)
    if isinstance(node, exp.GenerateSeries):
        return _date_sequence(node)
    if isinstance(node, exp.Cast):
        return _struct_text(node)
    if isinstance(node, (exp.Neg, exp.Negative)):
        return _negated(node)
    if isinstance(node, exp.FromJson):
        return _from_json(node)
    if isinstance(node, exp.JSONFormat):
        return _to_json(node)
    if isinstance(node, exp.RegexpExtract) and isinstance(node.args.get("group"), exp.Null):
        return exp.Cast(this=exp.Null(), to=exp.DataType.build("VARCHAR"))
    if (isinstance(node, exp.Space) and isinstance(node.this, exp.Literal) and node.this.is_string
            and "e" in str(node.this.this).lower()):
        return exp.Cast(this=exp.Null(), to=exp.DataType.build("VARCHAR"))  # Spark reads no exponent in a count
    return None
