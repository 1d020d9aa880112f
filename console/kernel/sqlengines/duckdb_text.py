"""Spark's text-making functions DuckDB says otherwise: `to_json` of the structs a statement
builds (Spark leaves a null field out: {"b":2}, DuckDB writes "a":null) and `parse_url` (which
DuckDB lacks), both as Spark 3.5 answers them (tests/spark checks them against Spark).
"""
from __future__ import annotations

import json

from sqlglot import exp

from console.kernel.sqlengines.spark import Untranslatable

ENGINE = "DuckDB"
# RFC 3986's own pattern: 2 scheme, 4 authority, 5 path, 7 query, 9 fragment.
_URL = r"^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?"
_PARTS = {"PROTOCOL": 2, "AUTHORITY": 4, "PATH": 5, "QUERY": 7, "REF": 9}


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _s(text: str) -> exp.Expr:
    return exp.Literal.string(text)


def _literal_struct(node: exp.Expr) -> bool:
    if isinstance(node, exp.Struct):
        return all(isinstance(e, exp.PropertyEQ) for e in node.expressions)
    if isinstance(node, exp.Array):
        return any(_literal_struct(e) for e in node.expressions)
    return False


def _json_text(node: exp.Expr) -> exp.Expr:
    """JSON text of a value, NULL for NULL; a struct written in the statement leaves its null
    fields out, as Spark's to_json does (ignoreNullFields)."""
    if isinstance(node, exp.Struct) and _literal_struct(node):
        fields = []
        for prop in node.expressions:
            value = prop.expression
            text = exp.DPipe(this=_s(json.dumps(str(prop.this.name)) + ":"), expression=_json_text(value))
            fields.append(exp.case().when(exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())), text))
        body = _fn("CONCAT_WS", _s(","), *fields) if fields else _s("")
        return exp.Paren(this=exp.DPipe(this=exp.DPipe(this=_s("{"), expression=body), expression=_s("}")))
    if isinstance(node, exp.Array) and _literal_struct(node):
        items = [exp.func("COALESCE", _json_text(e), _s("null")) for e in node.expressions]
        body = _fn("CONCAT_WS", _s(","), *items) if items else _s("")
        return exp.Paren(this=exp.DPipe(this=exp.DPipe(this=_s("["), expression=body), expression=_s("]")))
    return exp.Cast(this=_fn("TO_JSON", node), to=exp.DataType.build("VARCHAR"))


def _struct_keys(node: exp.Expr) -> bool:
    """A map built with struct keys: Spark's to_json prints such a key as [1], DuckDB as a dict."""
    for m in node.find_all(exp.Map, exp.VarMap):
        keys = m.args.get("keys")
        if isinstance(keys, exp.Array) and any(isinstance(k, exp.Struct) for k in keys.expressions):
            return True
    return False


def to_json(node: exp.JSONFormat) -> exp.Expr | None:
    if _struct_keys(node.this):
        raise Untranslatable("to_json of a map with struct keys", ENGINE, "Spark prints such keys its own way")
    if node.args.get("options") is not None or not _literal_struct(node.this):
        return None
    out = _json_text(node.this)
    return exp.Paren(this=exp.case().when(exp.Is(this=node.this.copy(), expression=exp.Null()), exp.Null())
                     .else_(out))


def parse_url(node: exp.ParseUrl) -> exp.Expr:
    """parse_url(url, part[, key]) by RFC 3986's pattern: NULL for a part the URL lacks (the path
    is '' then), as Spark (java.net.URI) answers a well-formed URL."""
    part = node.args.get("part_to_extract")
    name = str(part.this).upper() if isinstance(part, exp.Literal) and part.is_string else None
    if name is None:
        raise Untranslatable("parse_url with a part that is not a quoted text", ENGINE)
    url = node.this

    def group(n: int) -> exp.Expr:
        return _fn("REGEXP_EXTRACT", url.copy(), _s(_URL), exp.Literal.number(n))

    def present(n: int, marker: str) -> exp.Expr:
        return exp.GT(this=_fn("STRPOS", url.copy(), _s(marker)), expression=exp.Literal.number(0)) if marker else (
            exp.NEQ(this=group(n), expression=_s("")))

    key = node.args.get("key")
    if name == "QUERY" and key is not None:
        if not (isinstance(key, exp.Literal) and key.is_string):
            raise Untranslatable("parse_url with a query key that is not a quoted text", ENGINE)
        pattern = r"(?:^|&)" + _escape(str(key.this)) + r"=([^&]*)"
        query = group(7)
        found = _fn("REGEXP_MATCHES", query.copy(), _s(pattern))
        return exp.Paren(this=exp.case().when(exp.And(this=present(7, "?"), expression=found),
                                              _fn("REGEXP_EXTRACT", query, _s(pattern), exp.Literal.number(1))))
    if name in ("HOST", "USERINFO"):
        authority = group(4)
        n = 3 if name == "HOST" else 2
        pattern = r"^(([^@]*)@)?(\[[^\]]*\]|[^:]*)(:.*)?$"
        value = _fn("REGEXP_EXTRACT", authority, _s(pattern), exp.Literal.number(n))
        cond = exp.NEQ(this=value.copy(), expression=_s(""))
        return exp.Paren(this=exp.case().when(cond, value))
    if name == "FILE":
        query = exp.case().when(present(7, "?"), exp.DPipe(this=_s("?"), expression=group(7))).else_(_s(""))
        return exp.Paren(this=exp.DPipe(this=group(5), expression=exp.Paren(this=query)))
    if name not in _PARTS:
        return exp.Null()  # Spark: NULL for a part it does not know
    n = _PARTS[name]
    if name == "PATH":
        return group(n)
    marker = {"QUERY": "?", "REF": "#"}.get(name, "")
    if name == "AUTHORITY":
        marker = "//"
    return exp.Paren(this=exp.case().when(present(n, marker), group(n)))


# DuckDB's type names as Spark's typeof() says them.
_TYPE_NAMES = {"INTEGER": "int", "BIGINT": "bigint", "SMALLINT": "smallint", "TINYINT": "tinyint",
               "DOUBLE": "double", "FLOAT": "float", "VARCHAR": "string", "BOOLEAN": "boolean", "DATE": "date",
               "TIMESTAMP WITH TIME ZONE": "timestamp", "TIMESTAMP": "timestamp_ntz", "BLOB": "binary",
               '"NULL"': "void", "HUGEINT": "decimal(38,0)", "INTERVAL": "interval"}


def _spark_type_name(name: exp.Expr, depth: int = 2) -> exp.Expr:
    """A DuckDB type name (an expression giving it) in Spark's words; arrays two levels deep."""
    case = exp.case()
    for duck, spark in _TYPE_NAMES.items():
        case = case.when(exp.EQ(this=name.copy(), expression=_s(duck)), _s(spark))
    if depth > 0:
        length = exp.Sub(this=exp.func("LENGTH", name.copy()), expression=exp.Literal.number(2))
        inner = exp.func("LEFT", name.copy(), length)
        array = exp.DPipe(this=exp.DPipe(this=_s("array<"), expression=_spark_type_name(inner, depth - 1)),
                          expression=_s(">"))
        case = case.when(_fn("SUFFIX", name.copy(), _s("[]")), array)
    # DECIMAL(2,1) -> decimal(2,1); maps and structs keep DuckDB's spelling, lower-cased
    return exp.Paren(this=case.else_(exp.Lower(this=_fn("REPLACE", name.copy(), _s(" "), _s("")))))


def typeof(value: exp.Expr) -> exp.Expr:
    return _spark_type_name(_fn("TYPEOF", value))


def json_tuple(node: exp.Anonymous) -> exp.Expr:
    """json_tuple(j, 'a', 'b') in a select: columns c0, c1 of the keys' values as text (nested
    values as their JSON), NULL for a missing key or text that is not JSON; DuckDB unnests a
    struct into its columns."""
    text, *keys = node.expressions
    if isinstance(text, exp.Null):
        raise Untranslatable("json_tuple of a bare NULL", ENGINE, "Spark takes only text: cast(NULL as string)")
    if not keys or not all(isinstance(k, exp.Literal) and k.is_string for k in keys):
        raise Untranslatable("json_tuple with keys that are not quoted texts", ENGINE)
    if not isinstance(node.parent, exp.Select):
        raise Untranslatable("json_tuple outside a select list (LATERAL VIEW json_tuple)", ENGINE,
                             "use get_json_object(j, '$.key') for each key")
    fields = []
    for i, key in enumerate(keys):
        path = _s("$." + json.dumps(str(key.this)))
        value = exp.Paren(this=exp.case().when(_fn("JSON_VALID", text.copy()),
                                               _fn("JSON_EXTRACT_STRING", text.copy(), path)))
        fields.append(exp.PropertyEQ(this=exp.to_identifier(f"c{i}"), expression=value))
    return exp.Explode(this=_fn("STRUCT_PACK", *fields))


def _escape(text: str) -> str:
    return "".join("\\" + c if c in r"\.^$|?*+()[]{}" else c for c in text)


def locate(node: exp.StrPosition) -> exp.Expr:
    """locate/position with a start: Spark answers 0 for a NULL or < 1 start, and 1 for an empty
    substring (its indexOf of '' is 0 wherever it starts); DuckDB gives NULL and the start."""
    start = node.args.get("position")
    if start is None:
        return node
    substr, text = node.args["substr"], node.this
    either_null = exp.or_(exp.Is(this=substr.copy(), expression=exp.Null()),
                          exp.Is(this=text.copy(), expression=exp.Null()))
    return exp.Paren(this=exp.case()
                     .when(exp.Is(this=start.copy(), expression=exp.Null()), exp.Literal.number(0))
                     .when(either_null, exp.Null())
                     .when(exp.LT(this=start.copy(), expression=exp.Literal.number(1)), exp.Literal.number(0))
                     .when(exp.EQ(this=substr.copy(), expression=_s("")), exp.Literal.number(1))
                     .else_(node))


def array_text(node: exp.Cast) -> exp.Expr:
    """CAST(array(1, NULL, 3) AS STRING): Spark prints a NULL element as null, DuckDB as NULL.
    Only for an array of whole numbers and text written in the statement (a double or a nested
    value prints in Java's form, which this does not make)."""
    xs = node.this
    simple = all(isinstance(e, exp.Null) or (isinstance(e, exp.Literal) and (e.is_string or e.is_int))
                 for e in xs.expressions)
    if not simple:
        return node
    e = exp.to_identifier("e")
    each = exp.func("COALESCE", exp.Cast(this=exp.column(e), to=exp.DataType.build("VARCHAR")), _s("null"))
    listed = _fn("ARRAY_TO_STRING", exp.func("LIST_TRANSFORM", xs, exp.Lambda(this=each, expressions=[e])), _s(", "))
    return exp.Paren(this=exp.DPipe(this=exp.DPipe(this=_s("["), expression=listed), expression=_s("]")))


def map_text(node: exp.Cast) -> exp.Expr:
    """CAST(map('a', 1) AS STRING): Spark prints {a -> 1}, DuckDB {a=1}. Only for a map of whole
    numbers and text written in the statement (other values print in Java's form)."""
    parts = [*node.this.args["keys"].expressions, *node.this.args["values"].expressions]
    if not all(isinstance(e, exp.Null) or (isinstance(e, exp.Literal) and (e.is_string or e.is_int)) for e in parts):
        return node
    e = exp.to_identifier("e")

    def text(field: str) -> exp.Expr:
        value = exp.Dot(this=exp.column(e), expression=exp.to_identifier(field))
        return exp.func("COALESCE", exp.Cast(this=value, to=exp.DataType.build("VARCHAR")), _s("null"))

    each = exp.DPipe(this=exp.DPipe(this=text("key"), expression=_s(" -> ")), expression=text("value"))
    entries = exp.func("LIST_TRANSFORM", _fn("MAP_ENTRIES", node.this), exp.Lambda(this=each, expressions=[e]))
    listed = _fn("ARRAY_TO_STRING", entries, _s(", "))
    return exp.Paren(this=exp.DPipe(this=exp.DPipe(this=_s("{"), expression=listed), expression=_s("}")))
