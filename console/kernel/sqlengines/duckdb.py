"""Spark SQL -> DuckDB, keeping Spark's answers where the two engines differ.

sqlglot does most of the work (Spark -> DuckDB). On top of it, the rewrites below close the
differences the parity goldens (tests/kernel/spark_parity) found; each says what Spark does:

- `cast(x as int|bigint|smallint|tinyint)` truncates toward zero (DuckDB rounds: 38.9 -> 39);
  text such as '38.9' truncates too.
- Java date patterns (`date_format`, `from_unixtime`, `to_date`, `unix_timestamp`, ...) become
  DuckDB strftime codes letter by letter; a letter without a code fails by name.
- `substr(s, 0, n)` starts at the first character (DuckDB's position 0 is before it), and a
  negative length gives ''.
- `from_json(s, 'k INT, v STRING')` takes Spark's DDL schema; malformed JSON gives a struct of
  nulls, a NULL input NULL; `get_json_object` of malformed JSON is NULL (DuckDB fails the query).
- `size(NULL)` is -1; `dayofweek` counts Sunday as 1.
- `hash` / `xxhash64` exist on DuckDB with other values: refused by name.

The parity harness (tests/spark: Spark 3.5's own answers to 3,140 statements) found many more;
their rewrites live beside this module: duckdb_functions (Spark's semantics of functions DuckDB
has, and Spark's refusals), duckdb_missing (functions DuckDB lacks), duckdb_dates (dates over
text, dates that stay dates), duckdb_text (to_json, parse_url), duckdb_edges and duckdb_folds
(edge values, and Spark's answers for values written in the statement; run first) and
duckdb_spark_checks (what Spark refuses at analysis).

Anything else is DuckDB running sqlglot's translation, as before (DuckDB's own functions stay
callable: notebooks use them). Whatever a rewrite trips on becomes a refusal naming the
construct, never an internal error.
"""
from __future__ import annotations

import functools
import json
import re

from sqlglot import exp
from sqlglot.errors import ErrorLevel, UnsupportedError

from console.kernel.sqlengines import duckdb_edges, duckdb_functions, duckdb_spark_checks, duckdb_text
from console.kernel.sqlengines.spark import (FORMATTED, QUARTER_CODES, Untranslatable, function_name, java_pattern,
                                             literal_format, defined_names, is_number, parse, pieces, post_order,
                                             quarter_text, table_refs)

ENGINE = "DuckDB"
_INTEGRAL = {exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.BIGINT}
# Same name on DuckDB, other values: refused rather than answered differently.
_REFUSED = {"hash": "Spark's murmur3 hash", "xxhash64": "Spark's xxhash64"}

_FORMAT_CODES = {"year": "%Y", "year2": "%y", "month": "%m", "month_np": "%-m", "month_abbr": "%b",
                 "month_name": "%B", "day": "%d", "day_np": "%-d", "hour": "%H", "hour_np": "%-H",
                 "hour12": "%I", "hour12_np": "%-I", "minute": "%M", "minute_np": "%-M", "second": "%S",
                 "second_np": "%-S", "millis": "%g", "ampm": "%p", "weekday_abbr": "%a", "weekday_name": "%A",
                 **QUARTER_CODES}
# strptime reads one or two digits for the padded codes; it has no unpadded ones.
_PARSE_CODES = {**{k: v for k, v in _FORMAT_CODES.items() if k not in QUARTER_CODES}, "month_np": "%m",
                "day_np": "%d", "hour_np": "%H", "hour12_np": "%I", "minute_np": "%M", "second_np": "%S"}
_PARSERS = (exp.TsOrDsToDate, exp.StrToUnix, exp.StrToTime, exp.StrToDate, exp.TimeStrToUnix)


@functools.lru_cache(maxsize=1024)
def transpile(sql: str, numeric: frozenset[str] = frozenset()) -> tuple[str, tuple[str, ...]]:
    """(DuckDB SQL, names of the tables the query reads) for a Spark SQL select.

    numeric: the input tables' numeric column names (lower-case), which lets a cast to an integer
    truncate directly (through DECIMAL otherwise, which also reads text but is 30x slower).
    Raises sqlglot's ParseError for text that is not SQL, Untranslatable for a construct DuckDB
    would answer differently.
    """
    from sqlglot.errors import SqlglotError

    try:
        tree = parse(sql)
        _spark_range(tree)
        numeric = numeric - defined_names(tree)  # a subquery's `x` may be text where the input's x is not
        tree = post_order(tree, lambda node: _guarded(node, numeric))
        # sqlglot warns and writes something else for what DuckDB lacks (an aggregate's IGNORE
        # NULLS, aggregate's finish function): refused instead, by its words.
        return tree.sql(dialect="duckdb", unsupported_level=ErrorLevel.RAISE), table_refs(tree)
    except UnsupportedError as exc:
        # sqlglot's "SOUNDEX is not supported in DuckDB", "Argument 'finish' is not supported for
        # expression 'Reduce' when targeting DuckDB": the construct, said once
        said = str(exc).split("\n")[0].rstrip(".")
        construct = re.sub(r" is not supported(?: in DuckDB| for expression (.+) when targeting DuckDB)?$",
                           lambda m: f" of {m.group(1)}" if m.group(1) else "", said)
        raise Untranslatable(construct, ENGINE) from None
    except SqlglotError:
        raise
    except Exception as exc:  # sqlglot itself tripping on the text: the statement's error, said so
        raise Untranslatable("this statement", ENGINE,
                             f"sqlglot could not translate it ({type(exc).__name__}: {exc})") from None


def _guarded(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr:
    """A rewrite that fails on a construct it did not foresee names the construct (never an
    internal error): the statement is the user's, whatever its shape."""
    try:
        duckdb_spark_checks.check(node)
        return _rewrite(node, numeric)
    except Untranslatable:
        raise
    except Exception as exc:  # any fault here is about this one construct
        raise Untranslatable(f"{function_name(node)}() as written", ENGINE,
                             f"it could not be translated ({type(exc).__name__}: {exc})") from None


def _rewrite(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr:
    replaced = duckdb_edges.rewrite(node)
    if replaced is None:
        replaced = duckdb_functions.rewrite(node, numeric)
    if replaced is not None:
        return replaced
    if isinstance(node, (exp.StrToUnix, exp.TimeStrToUnix)):  # Spark: whole seconds, a BIGINT
        return exp.Cast(this=exp.func("FLOOR", _formatted(node, numeric)), to=exp.DataType.build("BIGINT"))
    return _formatted(node, numeric)


def _formatted(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr:
    if isinstance(node, FORMATTED):
        pattern = literal_format(node, ENGINE)
        if pattern is not None:
            codes = _PARSE_CODES if isinstance(node, _PARSERS) else _FORMAT_CODES
            parts = pieces(java_pattern(pattern, codes, ENGINE, _name(node)))
            if len(parts) > 1 or (parts and parts[0][0] != "text"):
                return _spliced(node, parts)
            node.set("format", exp.Literal.string(parts[0][1] if parts else ""))
        return node
    return _other(node, numeric)


def _other(node: exp.Expr, numeric: frozenset[str]) -> exp.Expr:
    if isinstance(node, (exp.Cast, exp.TryCast)) and node.to.this in _INTEGRAL:
        return _truncating_cast(node, numeric)
    if isinstance(node, exp.Substring):
        return _spark_substr(node)
    if (isinstance(node, exp.Cast) and isinstance(node.this, exp.Array) and node.this.expressions
            and node.to.this in (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)):
        return duckdb_text.array_text(node)
    if (isinstance(node, exp.Cast) and isinstance(node.this, exp.VarMap)
            and node.to.this in (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)):
        return duckdb_text.map_text(node)
    if isinstance(node, exp.StrPosition):
        return duckdb_text.locate(node)
    if isinstance(node, exp.FromJson):
        return _from_json(node)
    if isinstance(node, exp.JSONExtractScalar):
        valid = exp.Anonymous(this="JSON_VALID", expressions=[node.this.copy()])
        return exp.Paren(this=exp.case().when(valid, node).else_(exp.Null()))
    if isinstance(node, exp.ArraySize):
        return exp.func("COALESCE", exp.Anonymous(this="LEN", expressions=[node.this]), exp.Literal.number(-1))
    if isinstance(node, exp.DayOfWeek):
        return exp.Paren(this=exp.Add(this=node, expression=exp.Literal.number(1)))
    if isinstance(node, exp.Anonymous) and str(node.name).lower() in _REFUSED:
        name = str(node.name).lower()
        raise Untranslatable(f"{name}()", ENGINE, f"DuckDB's {name} gives other values than {_REFUSED[name]}")
    return node


def _spliced(node: exp.Expr, parts: list[tuple[str, str]]) -> exp.Expr:
    """date_format with a quarter: strftime pieces and QUARTER(ts) joined by || (NULL stays NULL)."""
    ts = node.this if isinstance(node, exp.TimeToStr) else exp.UnixToTime(this=node.this)
    out: exp.Expr | None = None
    for kind, fmt in parts:
        if kind == "text":
            piece: exp.Expr = type(node)(this=node.this.copy(), format=exp.Literal.string(fmt))
        else:
            piece = quarter_text(kind, exp.Anonymous(this="QUARTER", expressions=[ts.copy()]), "VARCHAR")
        out = piece if out is None else exp.DPipe(this=out, expression=piece)
    assert out is not None
    return exp.Paren(this=out)


def _name(node: exp.Expr) -> str:
    names: dict[type, str] = {exp.TimeToStr: "date_format", exp.UnixToStr: "from_unixtime",
                              exp.TsOrDsToDate: "to_date", exp.StrToUnix: "unix_timestamp",
                              exp.StrToTime: "to_timestamp"}
    return names.get(type(node), type(node).__name__)


def _truncating_cast(node: exp.Cast, numeric: frozenset[str]) -> exp.Expr:
    """Spark's cast to an integer type truncates (38.9 -> 38, '-38.9' -> -38); DuckDB's rounds.

    A number: TRUNC, then the cast. Text, or anything not surely a number: through
    DECIMAL(38,10), which holds every BIGINT exactly and parses text, then TRUNC.
    """
    value = node.this
    if isinstance(value, exp.Literal) and not value.is_string and value.is_int:
        return _wrapped_literal(int(value.this), node)
    if is_number(value, numeric):
        return exp.TryCast(this=exp.Anonymous(this="TRUNC", expressions=[value]), to=node.to)
    as_decimal = exp.TryCast(this=value, to=exp.DataType.build("DECIMAL(38, 10)"))
    truncated = exp.Anonymous(this="TRUNC", expressions=[as_decimal])
    return exp.TryCast(this=truncated, to=node.to)


# Bits of each integral type: Spark's non-ANSI cast of a whole number narrows like Java's (keeps the low bits).
_BITS = {exp.DataType.Type.TINYINT: 8, exp.DataType.Type.SMALLINT: 16, exp.DataType.Type.INT: 32,
         exp.DataType.Type.BIGINT: 64}


def _wrapped_literal(number: int, node: exp.Cast) -> exp.Expr:
    """CAST(300 AS TINYINT) is 44 in Spark (Java narrowing); DuckDB refuses or gives NULL."""
    bits = _BITS.get(node.to.this)
    # -32768S reaches here as -(CAST(32768 AS SMALLINT)): the sign is put inside by _negative_literal.
    if bits is None or isinstance(node.parent, exp.Neg) or not -(1 << 63) <= number < (1 << 63):
        return node
    half = 1 << (bits - 1)
    wrapped = (number + half) % (1 << bits) - half
    return exp.Cast(this=exp.Literal.number(wrapped), to=node.to)


def _spark_substr(node: exp.Substring) -> exp.Expr:
    start, length = node.args.get("start"), node.args.get("length")
    if start is not None:
        if isinstance(start, exp.Literal) and not start.is_string:
            if start.to_py() == 0:
                node.set("start", exp.Literal.number(1))
        else:
            node.set("start", exp.case().when(exp.EQ(this=start.copy(), expression=exp.Literal.number(0)),
                                              exp.Literal.number(1)).else_(start.copy()))
    if length is not None and not (isinstance(length, exp.Literal) and not length.is_string
                                   and float(length.to_py()) >= 0):
        node.set("length", exp.func("GREATEST", length.copy(), exp.Literal.number(0)))
    return node


def _from_json(node: exp.FromJson) -> exp.Expr:
    options = node.args.get("options")
    if options is not None and re.search(r"(?i)(timestamp|date)Format", options.sql()):
        raise Untranslatable("from_json's options", ENGINE, "DuckDB reads the JSON's own values; parse dates after")
    schema = node.expression
    if not (isinstance(schema, exp.Literal) and schema.is_string):
        raise Untranslatable("from_json with a schema that is not a quoted DDL text", ENGINE)
    structure = json.dumps(_json_structure(str(schema.this)))
    text = node.this
    parsed = exp.Anonymous(this="FROM_JSON", expressions=[text.copy(), exp.Literal.string(structure)])
    empty = exp.Anonymous(this="FROM_JSON", expressions=[exp.Literal.string("{}"), exp.Literal.string(structure)])
    blank = exp.EQ(this=exp.Trim(this=exp.Cast(this=text.copy(), to=exp.DataType.build("VARCHAR"))),
                   expression=exp.Literal.string(""))  # Spark: NULL, not a struct of nulls
    return exp.Paren(this=exp.case()
                     .when(exp.Is(this=text.copy(), expression=exp.Null()), exp.Null())
                     .when(blank, exp.Null())
                     .when(exp.Anonymous(this="JSON_VALID", expressions=[text.copy()]), parsed)
                     .else_(empty))


def _json_structure(ddl: str) -> object:
    """Spark's DDL schema ('k INT, v STRING') as DuckDB's JSON structure ({"k": "INTEGER", ...})."""
    from sqlglot.errors import ParseError

    whole = ddl.strip().lower().startswith(("struct<", "array<", "map<"))  # a type, not a field list
    try:
        struct = exp.DataType.build(ddl if whole else f"STRUCT<{ddl}>", dialect="spark")
    except (ParseError, ValueError):
        raise Untranslatable(f"from_json's schema {ddl!r} (expected Spark DDL such as 'k INT, v STRING')",
                             ENGINE) from None
    return _structure_of(struct)


def _structure_of(dtype: exp.DataType) -> object:
    if dtype.this == exp.DataType.Type.STRUCT:
        return {str(col.name): _structure_of(col.args["kind"]) for col in dtype.expressions}
    if dtype.this == exp.DataType.Type.ARRAY:
        return [_structure_of(dtype.expressions[0])]
    if dtype.this == exp.DataType.Type.MAP:
        raise Untranslatable("from_json to a MAP type", ENGINE, "name the fields as a struct")
    return dtype.sql(dialect="duckdb")


def _spark_range(tree: exp.Expr) -> None:
    """`range(n)` names its column `id`, as in Spark (DuckDB's own name is `range`)."""
    for table in tree.find_all(exp.Table):
        fn = table.this
        alias = table.args.get("alias")
        if not (isinstance(fn, exp.Anonymous) and fn.name.lower() == "range") or (alias and alias.columns):
            continue
        name = alias.name if alias and alias.name else "range"
        table.set("alias", exp.TableAlias(this=exp.to_identifier(name), columns=[exp.to_identifier("id")]))
