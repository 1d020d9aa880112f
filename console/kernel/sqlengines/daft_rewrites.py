"""Spark constructs said in Daft's words (the cluster's translation, daft.py): each rewrite keeps
Spark's meaning where Daft's own function differs (1-based substr, Java date patterns, NULL for
x / 0, '' for a regexp without a match, …) or refuses the form it cannot keep.
"""
from __future__ import annotations

from sqlglot import exp

from console.kernel.sqlengines.spark import (FORMATTED, QUARTER_CODES, Untranslatable, is_number, java_pattern,
                                             literal_format, pieces, quarter_text)

ENGINE = "the cluster (Daft)"
HINT = 'run it locally: set sql.engine = "local" where type="conf";'
_INTEGRAL = {exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.BIGINT}
_CASTABLE = _INTEGRAL | {exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT, exp.DataType.Type.TEXT,
                         exp.DataType.Type.VARCHAR, exp.DataType.Type.BOOLEAN, exp.DataType.Type.DATE,
                         exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DECIMAL}
_FORMAT_CODES = {"year": "%Y", "year2": "%y", "month": "%m", "month_np": "%-m", "month_abbr": "%b",
                 "month_name": "%B", "day": "%d", "day_np": "%-d", "hour": "%H", "hour_np": "%-H",
                 "hour12": "%I", "hour12_np": "%-I", "minute": "%M", "minute_np": "%-M", "second": "%S",
                 "second_np": "%-S", "millis": "%3f", "ampm": "%p", "weekday_abbr": "%a", "weekday_name": "%A",
                 **QUARTER_CODES}
_PARSE_CODES = {**{k: v for k, v in _FORMAT_CODES.items() if k not in QUARTER_CODES}, "month_np": "%m",
                "day_np": "%d", "hour_np": "%H", "hour12_np": "%I", "minute_np": "%M", "second_np": "%S"}

def fn_name(node: exp.Expr) -> str:
    """The function's name as the user wrote it in Spark SQL (collect_list, not sqlglot's array_agg)."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    if isinstance(node, exp.Func):
        try:
            text = node.sql("spark")
        except Exception:
            text = ""
        head = text.split("(", 1)[0].strip()
        return (head if head.replace("_", "").isalnum() else str(node.sql_name())).lower()
    return type(node).__name__.lower()


def refuse(node: exp.Expr, why: str = "") -> Untranslatable:
    return Untranslatable(f"{fn_name(node)}()" if isinstance(node, exp.Func) else type(node).__name__, ENGINE,
                          (why + "; " if why else "") + HINT)


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _num(n: int) -> exp.Expr:
    return exp.Literal.number(n)


def rewrite(node: exp.Expr, numeric: frozenset[str] = frozenset()) -> exp.Expr:
    """The node in Daft's words (its children already are), or Untranslatable: then daft_duck.py
    hands it to DuckDB. Visited once per node of the statement as written, never on what a rewrite
    built: an Anonymous here is a function the user wrote."""
    if isinstance(node, FORMATTED):
        return _dates(node)
    if isinstance(node, exp.Anonymous):
        if str(node.name).lower().startswith(("__duck_", "__collect")):
            return node
        raise refuse(node)  # Spark's function of that name, which Daft's may not match: DuckDB's
    if isinstance(node, (exp.Cast, exp.TryCast)):
        # Daft's casts differ from Spark's at the edges (overflow is NULL, not wrapped; dates print
        # as 2020-1-1; text that is no number): only a number to a float type is said in Daft.
        if node.to.this not in (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT) \
                or not is_number(node.this, numeric):
            raise refuse(node)
        return exp.Cast(this=node.this, to=node.to)
    if isinstance(node, exp.Exists) and not isinstance(node.this, (exp.Subquery, exp.Select)):
        raise refuse(node)  # Spark's exists(array, x -> …), the higher-order function
    if isinstance(node, exp.Intersect) and not node.args.get("distinct"):
        raise refuse(node, "INTERSECT ALL")
    if isinstance(node, exp.Window) and isinstance(node.this, exp.Count) and isinstance(node.this.this, exp.Star):
        # Daft's SQL has no count(*) over a window: the rows of the frame, counted as 1s (0 for none)
        node.set("this", exp.Sum(this=_num(1)))
        return exp.Coalesce(this=node, expressions=[_num(0)])
    if isinstance(node, exp.AggFunc) and isinstance(node.this, exp.Distinct) and not isinstance(node, exp.Count):
        raise refuse(node, "DISTINCT")  # Daft's SQL has DISTINCT in count only
    if isinstance(node, exp.Bracket) and not (isinstance(node.this, exp.Anonymous)
                                               and str(node.this.name) == "regexp_split"):
        raise refuse(node)  # Daft's [] is a list's 0-based index: a map's key, or a 1-based index, is DuckDB's
    if isinstance(node, exp.Div):
        divisor = node.expression
        return exp.Paren(this=exp.case().when(exp.EQ(this=divisor.copy(), expression=_num(0)), exp.Null())
                         .else_(exp.Div(this=node.this, expression=divisor)))
    if isinstance(node, exp.Substring):
        return _substr(node)
    if isinstance(node, exp.StrPosition):
        if node.args.get("position") is not None:
            raise refuse(node, "a start position")
        return exp.Paren(this=exp.Add(this=_fn("find", node.this, node.args["substr"]), expression=_num(1)))
    if isinstance(node, exp.If) and not isinstance(node.parent, exp.Case):
        return rewrite(exp.case().when(node.this, node.args["true"]).else_(node.args.get("false") or exp.Null()))
    if isinstance(node, (exp.RegexpSplit, exp.Split)):
        if node.args.get("limit") is not None:
            raise refuse(node, "a limit")
        return _fn("regexp_split", node.this, node.expression)
    if isinstance(node, exp.Explode) and not isinstance(node, exp.Posexplode):
        return _fn("explode", node.this)
    if isinstance(node, exp.ArraySize):  # Spark's size is an INT, -1 for NULL
        count = exp.Cast(this=_fn("list_count", node.this, exp.Literal.string("all")), to=exp.DataType.build("INT"))
        return exp.Coalesce(this=count, expressions=[_num(-1)])
    if isinstance(node, exp.JSONExtractScalar):
        return _json_key(node)
    if isinstance(node, exp.Dot) and isinstance(node.this, exp.FromJson):
        return _from_json_field(node.this, node.name)
    if isinstance(node, exp.Case):
        for branch in node.args.get("ifs") or []:  # Daft's CASE gives NULL for a NULL condition; Spark goes on
            branch.set("this", exp.Coalesce(this=branch.this, expressions=[exp.false()]))
        if node.args.get("default") is None:  # Daft's SQL wants an ELSE
            node.set("default", exp.Null())
        return node
    if isinstance(node, exp.RegexpExtract):  # no match: Spark gives '', Daft NULL
        return exp.Paren(this=exp.case().when(exp.Is(this=node.this.copy(), expression=exp.Null()), exp.Null())
                         .else_(exp.Coalesce(this=node, expressions=[exp.Literal.string("")])))
    if isinstance(node, exp.Concat) and not isinstance(node, exp.ConcatWs):
        return _fn("concat", *node.expressions)
    if isinstance(node, exp.Trim) and not node.args.get("position") and not node.expression:
        return _fn("strip", node.this)
    if isinstance(node, exp.DateDiff):
        return _fn("datediff", node.this, node.expression)
    if isinstance(node, exp.TsOrDsToDate):  # to_date(x) without a pattern
        return exp.Cast(this=exp.Cast(this=node.this, to=exp.DataType.build("TIMESTAMP")),
                        to=exp.DataType.build("DATE"))
    return node


def _dates(node: exp.Expr) -> exp.Expr:
    pattern = literal_format(node, ENGINE)
    names: dict[type, str] = {exp.TimeToStr: "date_format", exp.UnixToStr: "from_unixtime",
                              exp.TsOrDsToDate: "to_date", exp.StrToUnix: "unix_timestamp",
                              exp.StrToTime: "to_timestamp"}
    name = names.get(type(node), fn_name(node))
    if pattern is None:
        if isinstance(node, exp.TsOrDsToDate):
            return exp.Cast(this=exp.Cast(this=node.this, to=exp.DataType.build("TIMESTAMP")),
                            to=exp.DataType.build("DATE"))
        raise refuse(node, "without a date pattern")
    value = node.this
    if isinstance(node, (exp.TimeToStr, exp.UnixToStr)):
        if isinstance(node, exp.UnixToStr):
            ts: exp.Expr = _fn("timestamp_seconds", value)
        else:
            inner = value.this if isinstance(value, exp.TimeStrToTime) else value
            if _full_seconds_text(inner):  # date_format(from_unixtime(x), …): skip printing and parsing again
                ts = inner.expressions[0]
            else:
                ts = exp.Cast(this=inner, to=exp.DataType.build("TIMESTAMP"))
        parts = [_fn("strftime", ts.copy(), exp.Literal.string(fmt)) if kind == "text"
                 else _no_pipe(quarter_text(kind, _fn("quarter", ts.copy()), "VARCHAR"))
                 for kind, fmt in pieces(java_pattern(pattern, _FORMAT_CODES, ENGINE, name))]
        return parts[0] if len(parts) == 1 else _fn("concat", *parts)  # Daft's concat: NULL stays NULL
    fmt = exp.Literal.string(java_pattern(pattern, _PARSE_CODES, ENGINE, name))
    if isinstance(node, exp.TsOrDsToDate):
        return _fn("to_date", value, fmt)
    if isinstance(node, exp.StrToTime):
        return _fn("to_datetime", value, fmt)
    if isinstance(node, exp.StrToUnix):
        return _fn("to_unix_epoch", _fn("to_datetime", value, fmt), exp.Literal.string("s"))
    raise refuse(node)


def _full_seconds_text(node: exp.Expr) -> bool:
    """strftime(ts, '%Y-%m-%d %H:%M:%S'): a timestamp printed to the second, which parses back to itself."""
    return isinstance(node, exp.Anonymous) and str(node.name).lower() == "strftime" \
        and len(node.expressions) == 2 and isinstance(node.expressions[1], exp.Literal) \
        and node.expressions[1].this == "%Y-%m-%d %H:%M:%S"


def _no_pipe(node: exp.Expr) -> exp.Expr:
    """Daft has no ||: concat() (NULL in, NULL out, as ||)."""
    return _fn("concat", node.this, node.expression) if isinstance(node, exp.DPipe) else node


def _substr(node: exp.Substring) -> exp.Expr:
    """Spark's 1-based substr (0 means 1; negative counts from the end) as Daft's 0-based substr."""
    text, start, length = node.this, node.args.get("start"), node.args.get("length")
    negative = isinstance(start, exp.Neg)
    digits = start.this if isinstance(start, exp.Neg) else start
    if not (isinstance(digits, exp.Literal) and not digits.is_string and str(digits.this).isdigit()):
        raise refuse(node, "a start that is not a whole-number literal")
    pos = -int(digits.this) if negative else int(digits.this)
    count = length if length is not None else _fn("length", text.copy())
    if pos >= 0:
        begin: exp.Expr = _num(max(pos - 1, 0))
        span: exp.Expr = count
    else:  # from len+pos, clipped at 0; the end stays len+pos+length (Spark's substringSQL)
        first = exp.Add(this=_fn("length", text.copy()), expression=_num(pos))
        begin = exp.case().when(exp.LT(this=first.copy(), expression=_num(0)), _num(0)).else_(first.copy())
        if length is not None:
            span = exp.Sub(this=exp.Add(this=first.copy(), expression=length.copy()), expression=begin.copy())
        else:
            span = _fn("length", text.copy())
    if not (isinstance(span, exp.Literal) and span.is_int and int(span.to_py()) >= 0):
        span = exp.case().when(exp.LT(this=span.copy(), expression=_num(0)), _num(0)).else_(span.copy())
    as_int = exp.DataType.build("BIGINT")
    cut = _fn("substr", text, exp.Cast(this=begin, to=as_int), exp.Cast(this=span, to=as_int))
    # Daft's substr gives NULL where Spark's gives '' (nothing left to take): NULL only for a NULL input
    unknown: exp.Expr = exp.Is(this=text.copy(), expression=exp.Null())
    if length is not None:
        unknown = exp.Or(this=unknown, expression=exp.Is(this=length.copy(), expression=exp.Null()))
    return exp.Paren(this=exp.case().when(unknown, exp.Null())
                     .else_(exp.Coalesce(this=cut, expressions=[exp.Literal.string("")])))


def _json_key(node: exp.JSONExtractScalar) -> exp.Expr:
    """get_json_object(s, '$.key') for one top-level key (json_tuple: NULL for malformed JSON, as Spark)."""
    path = node.expression
    parts = path.expressions if isinstance(path, exp.JSONPath) else []
    if len(parts) != 2 or not isinstance(parts[0], exp.JSONPathRoot) or not isinstance(parts[1], exp.JSONPathKey):
        raise Untranslatable(f"get_json_object with the path {path.sql('spark')}", ENGINE,
                             "only '$.key' (one top-level key) runs on the cluster; " + HINT)
    key = exp.Literal.string(str(parts[1].this))
    return _fn("struct_get", _fn("json_tuple", node.this, key), key.copy())


def _from_json_field(node: exp.FromJson, field: str) -> exp.Expr:
    schema = node.expression
    if not (isinstance(schema, exp.Literal) and schema.is_string):
        raise refuse(node, "a schema that is not quoted DDL text")
    try:
        struct = exp.DataType.build(f"STRUCT<{schema.this}>", dialect="spark")
    except Exception:
        raise Untranslatable(f"from_json's schema {schema.this!r}", ENGINE, HINT) from None
    types = {str(c.name).lower(): c.args["kind"] for c in struct.expressions}
    kind = types.get(field.lower())
    if kind is None or kind.this not in _CASTABLE - {exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP}:
        raise Untranslatable(f"from_json(…).{field}", ENGINE, "a field of a simple type only; " + HINT)
    key = exp.Literal.string(field)
    text = _fn("struct_get", _fn("json_tuple", node.this, key), key.copy())
    if kind.this in _INTEGRAL:  # JSON numbers come back as text: '1' -> 1, '1.5' -> NULL as in Spark
        return exp.Cast(this=text, to=kind)
    return exp.Cast(this=text, to=kind) if kind.this not in (exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR) \
        else text
