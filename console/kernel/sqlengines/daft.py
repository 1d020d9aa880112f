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
from typing import Any

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

from console.kernel.sqlengines.spark import (FORMATTED, QUARTER_CODES, Untranslatable, java_pattern,
                                             defined_names, is_number, literal_format, parse, pieces, post_order,
                                             quarter_text, table_refs)

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
# Reading files or URLs by name: refused (the data roots rule), with their own message.
_FILE_FUNCTIONS = {"url_download", "url_upload", "download", "upload", "file", "file_size", "file_exists",
                   "file_path", "image_file", "audio_file", "video_file", "hdf5_file", "read_parquet", "read_csv",
                   "read_json", "read_deltalake", "read_iceberg", "read_lance", "read_sql"}

# The allowlist: the nodes the generated Daft SQL may contain ...
_NODES: tuple[type, ...] = (
    exp.Select, exp.From, exp.Join, exp.Where, exp.Group, exp.Having, exp.Order, exp.Ordered, exp.Limit,
    exp.Offset, exp.Column, exp.Identifier, exp.Literal, exp.Alias, exp.Table, exp.TableAlias, exp.Star,
    exp.Paren, exp.Null, exp.Boolean, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.And, exp.Or,
    exp.Not, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Neg, exp.Is, exp.In, exp.Between,
    exp.Like, exp.Case, exp.If, exp.Coalesce, exp.Cast, exp.DataType, exp.DataTypeParam, exp.Count,
    exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Distinct, exp.Window, exp.WindowSpec, exp.RowNumber, exp.Rank,
    exp.DenseRank, exp.Lag, exp.Lead, exp.With, exp.CTE, exp.Subquery, exp.Union, exp.Exists, exp.Rollup,
    exp.ConcatWs, exp.Concat, exp.Lower, exp.Upper, exp.Length, exp.RegexpExtract, exp.Bracket,
    exp.DateDiff, exp.Round, exp.Floor, exp.Ceil, exp.Abs, exp.Sqrt, exp.Stddev, exp.StddevSamp,
    exp.Anonymous, exp.Var, exp.Ln, exp.Exp, exp.Pow, exp.RegexpReplace, exp.Left, exp.Right,
    exp.Year, exp.Month, exp.Day, exp.Quarter, exp.Tuple, exp.GroupingSets, exp.Cube,
)
# ... and the Daft functions it may call (as written after the rewrites).
_FUNCTIONS = {"concat", "quarter", "strftime", "timestamp_seconds", "to_date", "to_datetime", "to_unix_epoch",
              "substr", "find",
              "regexp_split", "explode", "list_count", "json_tuple", "struct_get", "datediff", "length",
              "strip", "lstrip", "rstrip", "reverse", "lpad", "rpad", "replace", "hour", "minute", "second",
              "date_trunc", "log10", "log2", "sign", "pmod"}


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

        def join_sql(self, expression: exp.Join) -> str:
            kind = (expression.kind or "").upper()
            if kind in ("SEMI", "ANTI"):
                on = self.sql(expression, "on")
                return f" LEFT {kind} JOIN {self.sql(expression, 'this')} ON {on}"
            return str(super().join_sql(expression))


@functools.lru_cache(maxsize=256)
def transpile(sql: str, columns: tuple[str, ...] = (), numeric: frozenset[str] = frozenset()
              ) -> tuple[str, tuple[str, ...]]:
    """(Daft SQL, names of the catalog tables it reads). Raises Untranslatable, or sqlglot's ParseError.

    columns: the input tables' column names; a column written in another case is matched to its
    name, as Spark matches them (Daft's own matching is case-sensitive). numeric: their numeric
    columns (lower-case): a cast of a number to an integer needs no detour through DECIMAL.
    """
    tree = parse(sql)
    _refuse_sources(tree)
    refs = table_refs(tree)
    _match_case(tree, columns)
    tree = _lateral_views(tree)
    numeric = numeric - defined_names(tree)
    tree = post_order(tree, lambda node: _rewrite(node, numeric))
    tree = _window_order(tree)
    _name_projections(tree)
    _check_allowed(tree)
    return tree.sql(dialect=_DaftDialect), refs


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
        if not isinstance(table.this, exp.Identifier):
            raise Untranslatable(f"the table function {_fn_name(table.this)}", ENGINE,
                                 "a select on the cluster reads catalog tables only: load the data first")
    for fn in tree.find_all(exp.Func):
        name = _fn_name(fn)
        if name in _FILE_FUNCTIONS:
            raise Untranslatable(f"{name}()", ENGINE, "SQL reads files only through load (the data roots rule)")


def _fn_name(node: exp.Expr) -> str:
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


def _refuse(node: exp.Expr, why: str = "") -> Untranslatable:
    return Untranslatable(f"{_fn_name(node)}()" if isinstance(node, exp.Func) else type(node).__name__, ENGINE,
                          (why + "; " if why else "") + HINT)


def _fn(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _num(n: int) -> exp.Expr:
    return exp.Literal.number(n)


def _rewrite(node: exp.Expr, numeric: frozenset[str] = frozenset()) -> exp.Expr:
    if isinstance(node, FORMATTED):
        return _dates(node)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        if node.to.this not in _CASTABLE:
            raise Untranslatable(f"cast to {node.to.sql('spark')}", ENGINE, HINT)
        value = node.this
        if node.to.this in _INTEGRAL and not is_number(value, numeric):
            # Spark truncates text too ('38.9' -> 38); Daft's text-to-int cast gives NULL for it.
            value = exp.Cast(this=value, to=exp.DataType.build("DECIMAL(38, 10)"))
        return exp.Cast(this=value, to=node.to)
    if isinstance(node, exp.Div):
        divisor = node.expression
        return exp.Paren(this=exp.case().when(exp.EQ(this=divisor.copy(), expression=_num(0)), exp.Null())
                         .else_(exp.Div(this=node.this, expression=divisor)))
    if isinstance(node, exp.Substring):
        return _substr(node)
    if isinstance(node, exp.StrPosition):
        if node.args.get("position") is not None:
            raise _refuse(node, "a start position")
        return exp.Paren(this=exp.Add(this=_fn("find", node.this, node.args["substr"]), expression=_num(1)))
    if isinstance(node, exp.If) and not isinstance(node.parent, exp.Case):
        return _rewrite(exp.case().when(node.this, node.args["true"]).else_(node.args.get("false") or exp.Null()))
    if isinstance(node, (exp.RegexpSplit, exp.Split)):
        if node.args.get("limit") is not None:
            raise _refuse(node, "a limit")
        return _fn("regexp_split", node.this, node.expression)
    if isinstance(node, exp.Explode) and not isinstance(node, exp.Posexplode):
        return _fn("explode", node.this)
    if isinstance(node, exp.ArraySize):
        return exp.Coalesce(this=_fn("list_count", node.this, exp.Literal.string("all")), expressions=[_num(-1)])
    if isinstance(node, exp.JSONExtractScalar):
        return _json_key(node)
    if isinstance(node, exp.Dot) and isinstance(node.this, exp.FromJson):
        return _from_json_field(node.this, node.name)
    if isinstance(node, exp.Case):
        for branch in node.args.get("ifs") or []:  # Daft's CASE gives NULL for a NULL condition; Spark goes on
            branch.set("this", exp.Coalesce(this=branch.this, expressions=[exp.false()]))
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
    name = names.get(type(node), _fn_name(node))
    if pattern is None:
        if isinstance(node, exp.TsOrDsToDate):
            return exp.Cast(this=exp.Cast(this=node.this, to=exp.DataType.build("TIMESTAMP")),
                            to=exp.DataType.build("DATE"))
        raise _refuse(node, "without a date pattern")
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
    raise _refuse(node)


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
        raise _refuse(node, "a start that is not a whole-number literal")
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
    return _fn("substr", text, exp.Cast(this=begin, to=as_int), exp.Cast(this=span, to=as_int))


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
        raise _refuse(node, "a schema that is not quoted DDL text")
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
        for i, proj in enumerate(select.expressions):
            if not isinstance(proj, (exp.Alias, exp.Column, exp.Star)):
                select.expressions[i] = exp.alias_(proj, proj.sql("spark").lower(), quoted=True)


# Why some refused nodes are refused, in their message.
_WHY: dict[type, str] = {exp.FromJson: "only a field of it (from_json(…).field) runs on the cluster",
                         exp.ArrayAgg: "Daft SQL has no list aggregate",
                         exp.ArrayUniqueAgg: "Daft SQL has no list aggregate"}


def _check_allowed(tree: exp.Expr) -> None:
    for node in tree.walk():
        if isinstance(node, exp.Anonymous):
            if str(node.name).lower() not in _FUNCTIONS:
                raise _refuse(node)
        elif not isinstance(node, _NODES):
            raise _refuse(node, _WHY.get(type(node), ""))
