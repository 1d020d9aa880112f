"""What both engines share when they read Spark SQL: the parse, the table names a select reads,
Java date patterns, and the error a construct gets when an engine cannot keep Spark's meaning.

The parse keeps date patterns as the user wrote them (Java's `yyyy-MM-dd`, not sqlglot's own
strftime guess), so each engine turns them into its own format with `java_pattern`, which knows
every letter it converts and refuses the others by name. A letter sqlglot does not know would
otherwise come back as literal text in every row (what Daft did with raw Spark text).
"""
from __future__ import annotations

from typing import Any, Callable

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import SqlglotError


class Untranslatable(SqlglotError):
    """A construct this engine cannot run with Spark's meaning: fails the statement by name.

    A sqlglot error too, so code that only wants a query's table names (SyntaxAnalyzeExt) and
    catches sqlglot's errors reports it instead of failing as a fault of ours."""

    def __init__(self, construct: str, engine: str, hint: str = "") -> None:
        self.construct = construct
        self.engine = engine
        super().__init__(f"{construct} is not supported on {engine}" + (f": {hint}" if hint else ""))


class SparkSql(Spark):
    """Spark SQL with date patterns left as written (no TIME_MAPPING), converted per engine."""

    TIME_MAPPING: dict[str, str] = {}


def parse(sql: str) -> exp.Expr:
    import sqlglot

    tree = sqlglot.parse_one(sql, read=SparkSql)
    if tree is None:
        raise Untranslatable("an empty statement", "SQL")
    if _null_struct_name(sql):
        # sqlglot reads named_struct(NULL, 1)'s name as the name 'NULL', as it reads 'NULL': the
        # tree cannot tell them apart, so such names are marked for the engines' checks (Spark
        # refuses a NULL name; a statement with both forms has both refused)
        for prop in tree.find_all(exp.PropertyEQ):
            name = prop.this
            if isinstance(prop.parent, exp.Struct) and isinstance(name, exp.Identifier) and name.this == "NULL":
                prop.this.meta["null_name"] = True
    return tree


def _null_struct_name(sql: str) -> bool:
    """Whether the statement's tokens hold named_struct(…) with NULL in a name's place."""
    from sqlglot.tokens import TokenType

    tokens = SparkSql().tokenize(sql)
    for i, tok in enumerate(tokens[:-2]):
        if tok.text.lower() != "named_struct" or tokens[i + 1].token_type != TokenType.L_PAREN:
            continue
        depth, arg, start = 0, 0, i + 2
        for j in range(i + 1, len(tokens)):
            kind = tokens[j].token_type
            if kind == TokenType.L_PAREN:
                depth += 1
                continue
            if kind in (TokenType.R_PAREN, TokenType.COMMA) and depth == 1:
                if arg % 2 == 0 and j == start + 1 and tokens[start].token_type == TokenType.NULL:
                    return True
                arg, start = arg + 1, j + 1
            if kind == TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    break
    return False


def table_refs(tree: exp.Expr) -> tuple[str, ...]:
    """Names of the catalog tables a select reads (CTE names and table functions left out)."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    refs: list[str] = []
    for t in tree.find_all(exp.Table):
        if not isinstance(t.this, exp.Identifier):  # table functions such as range(10)
            continue
        name = ".".join(p for p in (t.catalog, t.db, t.name) if p)
        if name.lower() not in ctes and name not in refs:
            refs.append(name)
    return tuple(refs)


def post_order(node: exp.Expr, rewrite: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
    """Rewrite the children first, then the node: a rewrite sees its arguments already translated,
    and what it builds is not visited again (sqlglot's transform() goes top-down)."""
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expr):
            node.set(key, post_order(value, rewrite))
        elif isinstance(value, list):
            node.set(key, [post_order(v, rewrite) if isinstance(v, exp.Expr) else v for v in value])
    return rewrite(node)


_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv)
_NUMERIC_OF_ARG = (exp.Round, exp.Floor, exp.Ceil, exp.Abs, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Sqrt)
_NUMBER_TYPES = {exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT,
                 exp.DataType.Type.BIGINT, exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT,
                 exp.DataType.Type.DECIMAL}


def is_number(node: exp.Expr, numeric: frozenset[str]) -> bool:
    """Whether an expression is surely a number (not text), from the input tables' numeric columns
    (`numeric`, lower-case names). False when unsure: callers then take the path that is right
    for text too, only slower."""
    if isinstance(node, exp.Literal):
        return not node.is_string
    if isinstance(node, (exp.Paren, exp.Neg)):
        return is_number(node.this, numeric)
    if isinstance(node, exp.Column):
        return node.name.lower() in numeric
    if isinstance(node, _ARITHMETIC):
        return is_number(node.this, numeric) and is_number(node.expression, numeric)
    if isinstance(node, exp.Count):
        return True
    if isinstance(node, _NUMERIC_OF_ARG):
        return is_number(node.this, numeric)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.this in _NUMBER_TYPES
    return False


def defined_names(tree: exp.Expr) -> frozenset[str]:
    """Lower-case names the query itself defines (aliases, CTE and subquery column lists)."""
    names = {str(a.alias).lower() for a in tree.find_all(exp.Alias)}
    for alias in tree.find_all(exp.TableAlias):
        names |= {str(c.name).lower() for c in alias.columns}
    return frozenset(names)


def numeric_columns(schemas: list[Any]) -> frozenset[str]:
    """Lower-case names that are numbers (ints, floats, decimals) in every one of these Arrow
    schemas that has them."""
    import pyarrow as pa

    numeric: set[str] = set()
    other: set[str] = set()
    for schema in schemas:
        for field in schema:
            t = field.type
            is_num = pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
            (numeric if is_num else other).add(field.name.lower())
    return frozenset(numeric - other)


# Java (DateTimeFormatter) letters -> a field name; each engine maps the names to its own codes.
_FIELDS: dict[str, dict[int, str]] = {
    "y": {1: "year", 2: "year2", 4: "year"},
    "M": {1: "month_np", 2: "month", 3: "month_abbr", 4: "month_name"},
    "d": {1: "day_np", 2: "day"},
    "H": {1: "hour_np", 2: "hour"},
    "h": {1: "hour12_np", 2: "hour12"},
    "m": {1: "minute_np", 2: "minute"},
    "s": {1: "second_np", 2: "second"},
    "S": {3: "millis"},
    "a": {1: "ampm"},
    "E": {1: "weekday_abbr", 2: "weekday_abbr", 3: "weekday_abbr", 4: "weekday_name"},
    "Q": {1: "quarter", 2: "quarter2", 3: "quarter_abbr"},
}
# strftime has no quarter: formats mark it (QUARTER_CODES) and engines splice QUARTER(ts) in (`pieces`).
QUARTER_CODES = {q: f"\x00{q}\x00" for q in ("quarter", "quarter2", "quarter_abbr")}


def pieces(fmt: str) -> list[tuple[str, str]]:
    """A converted format as ("text", strftime format) and ("quarter…", "") pieces, empty text left out."""
    out: list[tuple[str, str]] = []
    for i, part in enumerate(fmt.split("\x00")):
        if i % 2:
            out.append((part, ""))
        elif part:
            out.append(("text", part))
    return out


def quarter_text(kind: str, quarter: exp.Expr, varchar: str) -> exp.Expr:
    """Spark's Q (4), QQ (04) and QQQ (Q4) from a quarter number expression."""
    digit = exp.Cast(this=quarter, to=exp.DataType.build(varchar))
    prefix = {"quarter": "", "quarter2": "0", "quarter_abbr": "Q"}[kind]
    return exp.DPipe(this=exp.Literal.string(prefix), expression=digit) if prefix else digit


def java_pattern(pattern: str, codes: dict[str, str], engine: str, function: str) -> str:
    """A Java date pattern in an engine's strftime codes (`codes`: field name -> code).

    Quoted text ('T', and '' for a quote) stays literal; a letter (or a run length) that has no
    code here raises Untranslatable naming it, never a format that prints the letter as text.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            end = pattern.find("'", i + 1)
            if end == i + 1:  # '' is a quote
                out.append("'")
                i += 2
                continue
            if end < 0:
                raise Untranslatable(f"the unclosed quote in {function}'s pattern {pattern!r}", engine)
            out.append(pattern[i + 1:end].replace("%", "%%"))
            i = end + 1
            continue
        if ch.isalpha():
            run = 1
            while i + run < n and pattern[i + run] == ch:
                run += 1
            field = _FIELDS.get(ch, {}).get(run)
            code = codes.get(field) if field else None
            if code is None:
                raise Untranslatable(f"the date pattern letter {ch * run!r} in {function}({pattern!r})", engine,
                                     "use letters among y M d H h m s SSS a E Q, or format the parts yourself")
            out.append(code)
            i += run
            continue
        out.append("%%" if ch == "%" else ch)
        i += 1
    return "".join(out)


# Nodes whose `format` is a Java date pattern after the parse (date_format, from_unixtime,
# to_date/to_timestamp/unix_timestamp with a pattern).
FORMATTED = (exp.TimeToStr, exp.UnixToStr, exp.TsOrDsToDate, exp.StrToUnix, exp.StrToTime, exp.StrToDate,
             exp.TimeStrToUnix)


def literal_format(node: exp.Expr, engine: str) -> str | None:
    """The node's pattern text, None when it has none; a pattern that is not one literal is refused."""
    fmt = node.args.get("format")
    if fmt is None:
        return None
    if isinstance(fmt, exp.Literal) and fmt.is_string:
        return str(fmt.this)
    raise Untranslatable(f"a date pattern that is not a single quoted text ({fmt.sql('spark')})", engine)


def function_name(node: Any) -> str:
    """How the user wrote a function, for messages (sqlglot's class name otherwise)."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return str(getattr(node, "sql_name", lambda: type(node).__name__)()).lower()
