"""Spark functions whose DuckDB namesake (as sqlglot translates it) answers differently: each
rewrite below says what Spark does, found by the parity harness (tests/spark, Spark 3.5's own
answers). A construct Spark refuses (a type check, an argument out of range) is refused here too,
by name, rather than answered.

`rewrite(node, numeric)` returns the node's replacement, or None to leave it to duckdb.py.
"""
from __future__ import annotations

import re
from typing import Callable

from sqlglot import exp

from console.kernel.sqlengines import duckdb_dates, duckdb_missing, duckdb_text
from console.kernel.sqlengines.spark import Untranslatable, is_number

ENGINE = "DuckDB"
_INT_WIDTH = {exp.DataType.Type.TINYINT: 1, exp.DataType.Type.SMALLINT: 2, exp.DataType.Type.INT: 4,
              exp.DataType.Type.BIGINT: 8}
_RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile, exp.Lag, exp.Lead)
_MAPS = (exp.Map, exp.VarMap, exp.MapFromEntries, exp.StrToMap)
_BINARY = {exp.DataType.Type.BINARY, exp.DataType.Type.VARBINARY}
# What Spark's string -> boolean/number casts trim: every character up to the space.
_SPACES = "".join(chr(c) for c in range(33))


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _case(cond: exp.Expr, then: exp.Expr, default: exp.Expr | None = None) -> exp.Expr:
    case = exp.case().when(cond, then)
    return exp.Paren(this=case.else_(default) if default is not None else case)


def _int_literal(node: exp.Expr) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string and node.is_int:
        return int(node.to_py())
    if isinstance(node, exp.Neg):
        inner = _int_literal(node.this)
        return None if inner is None else -inner
    return None


def _text(node: exp.Expr | None) -> str | None:
    return str(node.this) if isinstance(node, exp.Literal) and node.is_string else None


def _index_from_zero(node: exp.Transform | exp.ArrayFilter) -> None:
    """Spark's (x, i) -> … counts i from 0; DuckDB's lambdas count from 1."""
    fn = node.expression if isinstance(node, exp.Transform) else node.args.get("expression")
    if not isinstance(fn, exp.Lambda) or len(fn.expressions) != 2:
        return
    index = fn.expressions[1].name
    if isinstance(fn.this, (exp.Identifier, exp.Column)) and fn.this.name == index:
        fn.set("this", exp.Paren(this=exp.Sub(this=fn.this.copy(), expression=exp.Literal.number(1))))
        return
    for ident in list(fn.this.find_all(exp.Identifier)):
        if ident.name == index and not isinstance(ident.parent, exp.Lambda):
            target = ident.parent if isinstance(ident.parent, exp.Column) else ident
            target.replace(exp.Paren(this=exp.Sub(this=target.copy(), expression=exp.Literal.number(1))))


def _binary_of_integral(node: exp.Cast) -> exp.Expr | None:
    """CAST(int AS BINARY) is the integer's big-endian bytes (4 for an INT) in Spark; DuckDB has no
    such cast (NULL). hex() sign-extends to 16 digits; the type's width is kept from the right."""
    value = node.this
    width = None
    if isinstance(value, (exp.Cast, exp.TryCast)) and value.to.this in _INT_WIDTH:
        width = _INT_WIDTH[value.to.this]
    elif (number := _int_literal(value)) is not None:
        width = 4 if -2**31 <= number < 2**31 else 8
    if width is None:
        return None
    digits = exp.func("LPAD", _fn("HEX", value), exp.Literal.number(16), exp.Literal.string("0"))
    return _fn("UNHEX", exp.func("RIGHT", digits, exp.Literal.number(2 * width)))


def _to_binary(value: exp.Expr, fmt: exp.Expr | None, try_: bool) -> exp.Expr:
    """to_binary(s[, 'hex'|'utf-8'|'utf8'|'base64']); hex by default. Another format fails, as in
    Spark; bad hex fails too (NULL for try_to_binary)."""
    if fmt is not None and isinstance(fmt, exp.Null):
        return exp.Null()
    name = "hex" if fmt is None else _text(fmt)
    if name is None:
        raise Untranslatable("to_binary with a format that is not a quoted text", ENGINE)
    name = name.lower()
    if name == "hex":
        decoded = _fn("UNHEX", value.copy())
        if try_:
            return _case(exp.func("REGEXP_FULL_MATCH", value.copy(), exp.Literal.string("[0-9a-fA-F]*")), decoded)
        return decoded
    if name in ("utf-8", "utf8"):
        return _fn("ENCODE", value)
    if name == "base64":
        return _fn("FROM_BASE64", value)
    raise Untranslatable(f"to_binary's format {name!r}", ENGINE, "Spark takes 'hex', 'utf-8', 'utf8' or 'base64'")


def _group_count(pattern: exp.Expr) -> int | None:
    text = _text(pattern)
    if text is None:
        return None
    try:
        return re.compile(text).groups
    except re.error:
        return None


def _check_group(node: exp.Expr, name: str) -> None:
    """Spark refuses a group index past the pattern's groups, or below 0; DuckDB answers ''."""
    index = node.args.get("group")
    number = _int_literal(index) if index is not None else None
    groups = _group_count(node.expression)
    if number is not None and (number < 0 or (groups is not None and number > groups)):
        raise Untranslatable(f"{name}'s group index {number}", ENGINE,
                             f"the pattern has {groups} group(s); Spark refuses it too")


def _regexp_extract(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    _check_group(node, "regexp_extract")
    return None


def _regexp_extract_all(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    """A group that took no part in a match is '' in Spark (DuckDB: NULL)."""
    _check_group(node, "regexp_extract_all")
    g = exp.to_identifier("_g")
    return exp.func("LIST_TRANSFORM", node, exp.Lambda(this=exp.func("COALESCE", g.copy(), exp.Literal.string("")),
                                                       expressions=[g.copy()]))


def _spark_replacement(text: str) -> str:
    """Spark's (Java's) replacement text, $1 and \\$, in DuckDB's (RE2's) \\1 form."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append("\\\\" if nxt == "\\" else nxt)
            i += 2
        elif ch == "$" and i + 1 < len(text) and text[i + 1].isdigit():
            out.append("\\" + text[i + 1])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _regexp_replace(node: exp.RegexpReplace) -> exp.Expr:
    replacement = node.args.get("replacement")
    if (text := _text(replacement)) is not None and ("$" in text or "\\" in text):
        node.set("replacement", exp.Literal.string(_spark_replacement(text)))
    position = node.args.get("position")
    if position is None:
        return node
    number = _int_literal(position)
    if number is None:
        raise Untranslatable("regexp_replace with a position that is not a number", ENGINE)
    if number <= 0:
        raise Untranslatable(f"regexp_replace's position {number}", ENGINE, "it starts at 1; Spark refuses it too")
    node.set("position", None)
    if number == 1:
        return node
    subject = node.this
    head = exp.Substring(this=subject.copy(), start=exp.Literal.number(1), length=exp.Literal.number(number - 1))
    node.set("this", exp.Substring(this=subject.copy(), start=exp.Literal.number(number)))
    return exp.Paren(this=exp.DPipe(this=head, expression=node))


def _moments(node: exp.Skewness | exp.Kurtosis) -> exp.Expr:
    """Spark's skewness and kurtosis are the population moments (DuckDB's: sample-adjusted), and
    NULL where the values do not vary."""
    if isinstance(node.parent, exp.Window):
        raise Untranslatable(f"{node.sql_name().lower()}() as a window function", ENGINE)
    x = node.this
    n = exp.Count(this=x.copy())
    flat = exp.EQ(this=exp.func("VAR_POP", x.copy()), expression=exp.Literal.number(0))
    if isinstance(node, exp.Kurtosis):
        return _case(flat, exp.Null(), _fn("KURTOSIS_POP", x.copy()))
    # sample skewness = population skewness * sqrt(n (n - 1)) / (n - 2); two values: 0
    factor = exp.Div(this=exp.Paren(this=exp.Sub(this=n.copy(), expression=exp.Literal.number(2))),
                     expression=exp.func("SQRT", exp.Mul(this=n.copy(), expression=exp.Paren(this=exp.Sub(
                         this=n.copy(), expression=exp.Literal.number(1))))))
    case = exp.case().when(flat, exp.Null()).when(exp.EQ(this=n.copy(), expression=exp.Literal.number(2)),
                                                  exp.Literal.number(0.0))
    return exp.Paren(this=case.else_(exp.Mul(this=_fn("SKEWNESS", x.copy()), expression=factor)))


def _positive_log(node: exp.Expr, value: exp.Expr) -> exp.Expr:
    """Spark's logarithms are NULL at and below 0 (DuckDB: -inf, NaN or an error)."""
    return _case(exp.GT(this=value.copy(), expression=exp.Literal.number(0)), node)


def _reduce(node: exp.Reduce) -> exp.Expr:
    """aggregate(xs, init, merge, finish): finish applied to the reduction (sqlglot drops it)."""
    finish = node.args.get("finish")
    init = node.args.get("initial")
    merge = node.args.get("merge")
    base = exp.Reduce(this=node.this, initial=init, merge=merge)
    # list_reduce skips init for an empty list in older DuckDB: prepend init, as Spark folds from it
    if finish is None:
        return base
    if not isinstance(finish, exp.Lambda) or len(finish.expressions) != 1:
        raise Untranslatable("aggregate's finish function", ENGINE)
    return exp.Paren(this=duckdb_missing.substitute(finish.this, {finish.expressions[0].name: base}))


def _aggregate_default(node: exp.Expr, default: exp.Expr) -> exp.Expr | None:
    """collect_list/collect_set of no rows is [] and count_if 0 in Spark (DuckDB: NULL)."""
    if isinstance(node.parent, (exp.Window, exp.Filter)):
        return None
    return exp.func("COALESCE", node, default)


_Rewrite = Callable[[exp.Expr, frozenset[str]], "exp.Expr | None"]


def rewrite(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    handler = _HANDLERS.get(type(node))
    if handler is not None:
        replaced = handler(node, numeric)
        return replaced if replaced is not None else duckdb_dates.rewrite(node)
    replaced = _anonymous(node, numeric)
    if replaced is None:
        replaced = duckdb_dates.rewrite(node)
    return replaced if replaced is not None else duckdb_missing.rewrite(node)


def _anonymous(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    if not isinstance(node, exp.Anonymous):
        return None
    name = str(node.name).lower()
    args = node.expressions
    if name == "json_array_length" and len(args) == 1:
        text = args[0]
        valid = exp.And(this=_fn("JSON_VALID", text.copy()),
                        expression=exp.EQ(this=_fn("JSON_TYPE", text.copy()), expression=exp.Literal.string("ARRAY")))
        return _case(valid, _fn("JSON_ARRAY_LENGTH", text.copy()))
    if name in ("date_part", "datepart") and len(args) == 2 and _text(args[0]) is not None:
        return duckdb_dates.seconds(node, str(_text(args[0])), args[1])
    if name == "try_to_binary" and args:
        return _to_binary(args[0], args[1] if len(args) > 1 else None, try_=True)
    return None


def _cast(node: exp.Cast, numeric: frozenset[str]) -> exp.Expr | None:
    to = node.to.this
    inner = node.this
    if (to in (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR) and isinstance(inner, (exp.Cast, exp.TryCast))
            and inner.to.this == exp.DataType.Type.TIMESTAMPTZ):
        inner.set("to", exp.DataType.build("TIMESTAMP"))  # Spark prints no zone offset ('+00')
        return None
    if to in _BINARY:
        return _binary_of_integral(node)
    if (to in (exp.DataType.Type.DOUBLE, exp.DataType.Type.BIGINT) and isinstance(inner, (exp.Cast, exp.TryCast))
            and inner.to.this in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ)):
        seconds = _fn("EPOCH", inner)  # Spark: a timestamp as a number is its seconds since the epoch
        return seconds if to == exp.DataType.Type.DOUBLE else exp.Cast(
            this=exp.func("FLOOR", seconds), to=exp.DataType.build("BIGINT"))
    if to == exp.DataType.Type.BOOLEAN and not is_number(node.this, numeric):
        trimmed = exp.Trim(this=exp.Cast(this=node.this, to=exp.DataType.build("VARCHAR")),
                           expression=exp.Literal.string(_SPACES))
        return exp.TryCast(this=trimmed, to=node.to) if _text(node.this) is not None else None
    if to in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ) and is_number(node.this, numeric):
        return _fn("TO_TIMESTAMP", node.this)  # Spark: seconds since the epoch
    return None


def _window(node: exp.Window, numeric: frozenset[str]) -> exp.Expr | None:
    fn = node.this
    if isinstance(fn, _RANKING) and node.args.get("spec") is not None:
        name = fn.sql_name().lower()
        raise Untranslatable(f"{name}() with a window frame", ENGINE, "Spark refuses it too: leave the frame out")
    return None


def _group(node: exp.Group, numeric: frozenset[str]) -> exp.Expr | None:
    for key in node.expressions:
        if isinstance(key, _MAPS):
            raise Untranslatable("GROUP BY a map value", ENGINE, "Spark cannot group by maps either")
    return None


def _logical(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    if is_number(node.this, numeric):
        name = "bool_and" if isinstance(node, exp.LogicalAnd) else "bool_or"
        raise Untranslatable(f"{name}() of a number", ENGINE, "it takes booleans, as in Spark")
    return None


def _ignore_nulls(node: exp.IgnoreNulls, numeric: frozenset[str]) -> exp.Expr | None:
    inner = node.this
    if isinstance(inner, exp.AnyValue) and not isinstance(node.parent, exp.Window):
        return inner  # DuckDB's any_value skips NULLs already
    if isinstance(node.parent, exp.Window) or not isinstance(inner, (exp.First, exp.Last)):
        return None
    kind = "FIRST" if isinstance(inner, exp.First) else "LAST"
    return exp.Filter(this=_fn(kind, inner.this.copy()),
                      expression=exp.Where(this=exp.Not(this=exp.Is(this=inner.this.copy(), expression=exp.Null()))))






def _refuse_number_format(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    fmt = node.args.get("format")
    if fmt is not None:
        name = "to_char" if isinstance(node, exp.ToChar) else "to_number"
        if isinstance(node, exp.ToChar) and not is_number(node.this, numeric) and not _numberish_format(fmt):
            return None  # a date pattern: DuckDB's strftime path
        raise Untranslatable(f"{name} with a number format", ENGINE, "use format_number or a cast")
    return None


def _numberish_format(fmt: exp.Expr) -> bool:
    text = _text(fmt)
    return text is None or re.fullmatch(r"[09.,$DGSMIPR\s]+", text.upper()) is not None


def _sequence(node: exp.GenerateSeries, numeric: frozenset[str]) -> exp.Expr | None:
    """sequence(5, 1) counts down in Spark (DuckDB: empty)."""
    if node.args.get("step") is not None:
        return None
    start, end = node.args["start"], node.args["end"]
    a, b = _int_literal(start), _int_literal(end)
    if a is not None and b is not None and a > b:
        node.set("step", exp.Literal.number(-1))
    return None


def _sha2(node: exp.Expr) -> exp.Expr | None:
    if node.args.get("length") is None:
        raise Untranslatable("sha2() without its bit length", ENGINE, "Spark needs it too: sha2(x, 256)")
    return None


def _whole(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    """ceil/floor of a number is a BIGINT in Spark (DuckDB keeps the double: 5.0), as Java casts
    it: NaN is 0 and past the BIGINT range it stays at the end of the range."""
    if node.args.get("decimals") is not None or isinstance(node.parent, exp.Cast):
        return None
    value = exp.Cast(this=node.copy(), to=exp.DataType.build("DOUBLE"))
    top, bottom = 9223372036854775807, -9223372036854775808
    return exp.Paren(this=exp.case()
                     .when(exp.func("ISNAN", value.copy()), exp.Literal.number(0))
                     .when(exp.GTE(this=value.copy(), expression=exp.Literal.number(9.223372036854775807e18)),
                           exp.Literal.number(top))
                     .when(exp.LTE(this=value.copy(), expression=exp.Literal.number(-9.223372036854775808e18)),
                           exp.Cast(this=exp.Literal.number(bottom), to=exp.DataType.build("BIGINT")))
                     .else_(exp.TryCast(this=node, to=exp.DataType.build("BIGINT"))))


def _bit_count(node: exp.BitwiseCount, numeric: frozenset[str]) -> exp.Expr | None:
    """Spark counts an integer's bits as a BIGINT's (bit_count(-1) is 64) and takes no fractions."""
    value = node.this
    cast = value if isinstance(value, (exp.Cast, exp.TryCast)) else None
    if _int_literal(value) is not None or (cast is not None and cast.to.this in _INT_WIDTH):
        return _fn("BIT_COUNT", exp.Cast(this=value, to=exp.DataType.build("BIGINT")))
    fraction = {exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT, exp.DataType.Type.DECIMAL}
    if (isinstance(value, exp.Literal) and not value.is_string) or (cast is not None and cast.to.this in fraction):
        raise Untranslatable("bit_count() of a fraction", ENGINE, "it takes integers and booleans, as in Spark")
    return None




def _array_position(node: exp.ArrayPosition, numeric: frozenset[str]) -> exp.Expr | None:
    """array_position is 0 when the value is absent (DuckDB: NULL); NULL for a NULL array or value."""
    xs, value = node.this, node.expression
    absent = exp.Or(this=exp.Is(this=xs.copy(), expression=exp.Null()),
                    expression=exp.Is(this=value.copy(), expression=exp.Null()))
    return _case(absent, exp.Null(), exp.func("COALESCE", node, exp.Literal.number(0)))


def _array_remove(node: exp.ArrayRemove, numeric: frozenset[str]) -> exp.Expr | None:
    """array_remove keeps the NULL elements (DuckDB's filter drops them); a NULL value gives NULL."""
    xs, value = node.this, node.expression
    x = exp.to_identifier("_x")
    keep = exp.Or(this=exp.Is(this=x.copy(), expression=exp.Null()),
                  expression=exp.NEQ(this=x.copy(), expression=value.copy()))
    kept = exp.func("LIST_FILTER", xs, exp.Lambda(this=keep, expressions=[x.copy()]))
    return _case(exp.Is(this=value.copy(), expression=exp.Null()), exp.Null(), kept)


def _array_distinct(node: exp.ArrayDistinct, numeric: frozenset[str]) -> exp.Expr | None:
    """array_distinct keeps the first of each value in order, NULL included (DuckDB: any order, no NULL)."""
    xs = node.this
    x, i, y = (exp.to_identifier(n) for n in ("_x", "_i", "_y"))
    earlier = exp.Bracket(this=xs.copy(), expressions=[exp.Slice(this=exp.Literal.number(1), expression=exp.Paren(
        this=exp.Sub(this=i.copy(), expression=exp.Literal.number(1))))])
    seen = exp.func("LIST_FILTER", earlier, exp.Lambda(this=exp.NullSafeEQ(this=y.copy(), expression=x.copy()),
                                                       expressions=[y.copy()]))
    first = exp.EQ(this=exp.func("LEN", seen), expression=exp.Literal.number(0))
    return exp.func("LIST_FILTER", xs, exp.Lambda(this=first, expressions=[x.copy(), i.copy()]))




def _negative_literal(node: exp.Neg, numeric: frozenset[str]) -> exp.Expr | None:
    """-32768S is one SMALLINT literal in Spark; sqlglot reads it as -(32768 as SMALLINT), which
    overflows (NULL). The sign goes inside the cast."""
    inner = node.this
    if isinstance(inner, (exp.Cast, exp.TryCast)) and (number := _int_literal(inner.this)) is not None:
        return type(inner)(this=exp.Literal.number(-number), to=inner.to)
    return None


def _like(node: exp.Like | exp.ILike, numeric: frozenset[str]) -> exp.Expr | None:
    """Spark's LIKE escapes with a backslash by default (DuckDB: no escape unless ESCAPE says)."""
    pattern = _text(node.expression)
    if pattern is None or "\\" not in pattern or isinstance(node.parent, exp.Escape):
        return None
    return exp.Escape(this=node, expression=exp.Literal.string("\\"))


def _no_nan(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
    """corr, covar_samp and the regr_ functions are NULL, not NaN, where they divide by zero
    (Spark 3's statistical aggregates)."""
    if isinstance(node.parent, exp.Window):
        return None
    return _case(exp.func("ISNAN", node.copy()), exp.Null(), node)


def _keeping_nulls(name: str) -> _Rewrite:
    """Spark's any_value and first_value/last_value as aggregates, and min_by/max_by, keep a NULL
    value (DuckDB's any_value and arg_min skip it); a window's own function stays as it is."""
    def make(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr | None:
        if isinstance(node.parent, (exp.Window, exp.IgnoreNulls, exp.RespectNulls)):
            return None
        args = [node.this] + ([node.expression] if node.args.get("expression") is not None else [])
        return _fn(name, *args)
    return make


_HANDLERS: dict[type, _Rewrite] = {
    exp.AnyValue: _keeping_nulls("FIRST"),
    exp.FirstValue: _keeping_nulls("FIRST"),
    exp.LastValue: _keeping_nulls("LAST"),
    exp.ArgMin: _keeping_nulls("ARG_MIN_NULL"),
    exp.ArgMax: _keeping_nulls("ARG_MAX_NULL"),
    exp.JSONFormat: lambda n, _: duckdb_text.to_json(n),  # type: ignore[arg-type]
    exp.Typeof: lambda n, _: duckdb_text.typeof(n.this),
    exp.ParseUrl: lambda n, _: duckdb_text.parse_url(n),  # type: ignore[arg-type]
    exp.Like: _like,  # type: ignore[dict-item]
    exp.ILike: _like,  # type: ignore[dict-item]
    exp.Corr: _no_nan,
    exp.CovarSamp: _no_nan,
    exp.RegrSlope: _no_nan,
    exp.RegrR2: _no_nan,
    exp.RegrIntercept: _no_nan,
    exp.Neg: _negative_literal,  # type: ignore[dict-item]
    exp.Add: duckdb_dates.date_plus_interval,  # type: ignore[dict-item]
    exp.ArrayPosition: _array_position,  # type: ignore[dict-item]
    exp.ArrayRemove: _array_remove,  # type: ignore[dict-item]
    exp.ArrayDistinct: _array_distinct,  # type: ignore[dict-item]
    exp.Extract: lambda n, _: duckdb_dates.seconds(n, n.this.name, n.expression),
    exp.DateFromUnixDate: lambda n, _: exp.Cast(this=n, to=exp.DataType.build("DATE")),
    exp.IsNan: lambda n, _: None if isinstance(n.parent, exp.Func) and n.parent.name == "COALESCE" else exp.func(
        "COALESCE", n, exp.false()),
    exp.SHA2: lambda n, _: _sha2(n),
    exp.Format: lambda n, _: _fn("PRINTF", n.this, *n.expressions),
    exp.BitwiseCount: _bit_count,  # type: ignore[dict-item]
    exp.Ceil: _whole,
    exp.Floor: _whole,
    exp.Transform: lambda n, _: _index_from_zero(n),  # type: ignore[arg-type]
    exp.ArrayFilter: lambda n, _: _index_from_zero(n),  # type: ignore[arg-type]
    exp.Cast: _cast,  # type: ignore[dict-item]
    exp.TryCast: _cast,  # type: ignore[dict-item]
    exp.ToBinary: lambda n, _: _to_binary(n.this, n.args.get("format"), try_=False),
    exp.RegexpExtractAll: _regexp_extract_all,
    exp.RegexpExtract: _regexp_extract,
    exp.RegexpReplace: lambda n, _: _regexp_replace(n),  # type: ignore[arg-type]
    exp.Skewness: lambda n, _: _moments(n),  # type: ignore[arg-type]
    exp.Kurtosis: lambda n, _: _moments(n),  # type: ignore[arg-type]
    exp.Ln: lambda n, _: _positive_log(n, n.this),
    exp.Log: lambda n, _: _positive_log(n, n.args.get("expression") or n.this),
    exp.Reduce: lambda n, _: _reduce(n),  # type: ignore[arg-type]
    exp.ArrayAgg: lambda n, _: _aggregate_default(n, exp.Array(expressions=[])),
    # collect_set: duckdb_edges (sorted, and refused where Spark's hash order would show)
    exp.CountIf: lambda n, _: _aggregate_default(n, exp.Literal.number(0)),
    exp.Window: _window,  # type: ignore[dict-item]
    exp.Group: _group,  # type: ignore[dict-item]
    exp.LogicalAnd: _logical,
    exp.LogicalOr: _logical,
    exp.IgnoreNulls: _ignore_nulls,  # type: ignore[dict-item]
    exp.TsOrDsAdd: duckdb_dates.as_date,
    exp.AddMonths: duckdb_dates.as_date,
    exp.AtTimeZone: duckdb_dates.from_utc,  # type: ignore[dict-item]
    exp.ToChar: _refuse_number_format,
    exp.ToNumber: _refuse_number_format,
    exp.GenerateSeries: _sequence,  # type: ignore[dict-item]
    exp.Quantile: lambda n, _: _fn("QUANTILE_CONT", n.this, n.args["quantile"]),
    exp.ApproxQuantile: lambda n, _: _fn("QUANTILE_DISC", n.this, n.args["quantile"]),
}
