"""Statements Spark 3.5 refuses at analysis that DuckDB would answer: refused here too, with
Spark's reason, so the local engine never gives an answer Spark would not (tests/spark checks)."""
from __future__ import annotations

import re

from sqlglot import exp

from console.kernel.sqlengines.spark import Untranslatable

ENGINE = "DuckDB"


def _null(node: exp.Expr | None) -> bool:
    return isinstance(node, exp.Null)


def check(node: exp.Expr) -> None:
    """Raise Untranslatable where Spark refuses `node` for its types or its literal's form."""
    if isinstance(node, exp.Ntile) and _null(node.this):
        raise Untranslatable("ntile(NULL)", ENGINE, "Spark refuses it too: its bucket count must be an integer")
    if isinstance(node, exp.NthValue) and _null(node.args.get("offset")):
        raise Untranslatable("nth_value(x, NULL)", ENGINE,
                             "Spark refuses it too: the offset must be a positive integer")
    if isinstance(node, exp.If) and isinstance(node.parent, exp.Case) and _null(node.this):
        raise Untranslatable("CASE WHEN NULL", ENGINE, "Spark refuses it too: a WHEN condition must be a boolean")
    # Spark reads the pattern at the first row that is not NULL: NULL LIKE '\x' is NULL there.
    if (isinstance(node, (exp.Like, exp.ILike)) and not isinstance(node.parent, exp.Escape)
            and not _null(node.this)):
        pattern = node.expression
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            _like_escapes(pattern.this)
    if isinstance(node, exp.PropertyEQ) and isinstance(node.parent, exp.Struct) and node.this.meta.get("null_name"):
        raise Untranslatable("named_struct with a NULL field name", ENGINE,
                             "Spark refuses it too (DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING): "
                             "names are constant texts")
    check_more(node)


def _like_escapes(pattern: str) -> None:
    """Spark's LIKE escape (a backslash) may only precede _, % or itself, and not end the pattern."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            if i + 1 == len(pattern):
                raise Untranslatable("a LIKE pattern ending in its escape character", ENGINE,
                                     "Spark refuses it too (INVALID_FORMAT.ESC_AT_THE_END)")
            if pattern[i + 1] not in "_%\\":
                raise Untranslatable(f"a LIKE pattern with its escape before {pattern[i + 1]!r}", ENGINE,
                                     "Spark refuses it too (INVALID_FORMAT.ESC_IN_THE_MIDDLE): it may only "
                                     "precede _, % or itself")
            i += 1
        i += 1


_MAPS = (exp.Map, exp.VarMap, exp.MapFromEntries, exp.StrToMap)
_PATTERNED = (exp.RegexpCount, exp.RegexpExtract, exp.RegexpExtractAll, exp.RegexpReplace, exp.RegexpLike,
              exp.RegexpSplit)
_FRACTION_CODES = re.compile(r"%(?:\d+\$)?[-#+ 0,(]*\d*(?:\.\d+)?([a-zA-Z%])")


def check_more(node: exp.Expr) -> None:
    """What check() leaves: refusals over a statement's shape (maps as keys, literal columns)."""
    if isinstance(node, _PATTERNED):
        pattern = node.expression
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            _java_braces(pattern.this)
    if isinstance(node, exp.Select) and node.args.get("distinct") is not None:
        if any(isinstance(e.unalias(), _MAPS) for e in node.expressions):
            raise Untranslatable("SELECT DISTINCT of a map", ENGINE,
                                 "Spark refuses it too (UNSUPPORTED_FEATURE.SET_OPERATION_ON_MAP_TYPE)")
    if isinstance(node, exp.Group):
        for key in node.expressions:
            if isinstance(key, exp.Column) and _defined_as_map(node.root(), key.name):
                raise Untranslatable("GROUP BY a map value", ENGINE,
                                     "Spark refuses it too (GROUP_EXPRESSION_TYPE_IS_NOT_ORDERABLE)")
    if isinstance(node, (exp.LogicalAnd, exp.LogicalOr)):
        values = values_of(node.this)
        if values and all(isinstance(v, exp.Literal) and not v.is_string for v in values):
            name = "bool_and" if isinstance(node, exp.LogicalAnd) else "bool_or"
            raise Untranslatable(f"{name}() of a number", ENGINE,
                                 "Spark refuses it too (DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE): it takes booleans")
    if isinstance(node, exp.Median):  # percentile_approx of months agrees with Spark's (the harness)
        values = values_of(node.this)
        if any(isinstance(v, exp.Interval) and v.unit is not None and v.unit.name.upper() in ("YEAR", "MONTH")
               for v in values):
            raise Untranslatable(f"{node.sql_name().lower()}() of a year-month interval", ENGINE,
                                 "DuckDB has one interval type: its median of months is not Spark's")
    if isinstance(node, exp.Format) or (isinstance(node, exp.Anonymous) and str(node.name).lower() == "printf"):
        _decimal_fraction(node)


def _decimal_fraction(node: exp.Expr) -> None:
    """printf('%.2f', 3.14): Spark hands Java's formatter a Decimal, which %f does not take."""
    fmt = node.this if isinstance(node, exp.Format) else (node.expressions or [None])[0]
    args = node.expressions if isinstance(node, exp.Format) else node.expressions[1:]
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        return
    codes = [c for c in _FRACTION_CODES.findall(fmt.this) if c not in "%n"]
    for code, arg in zip(codes, args, strict=False):  # fewer arguments: Java's error, DuckDB's too
        if (code in "eEfgGaA" and isinstance(arg, exp.Literal) and not arg.is_string
                and "." in arg.this and "e" not in arg.this.lower()):
            raise Untranslatable(f"printf's %{code} of a DECIMAL", ENGINE,
                                 f"Spark refuses it too ({code} != org.apache.spark.sql.types.Decimal): "
                                 "cast it to DOUBLE")


def values_of(value: exp.Expr) -> list[exp.Expr]:
    """The literals a column takes from the VALUES list its SELECT reads (none when it reads
    something else): what DuckDB types by itself, where Spark's types decide."""
    if not isinstance(value, exp.Column):
        return []
    select = value.find_ancestor(exp.Select)
    source = select.args.get("from_") if select is not None else None
    table = source.this if source is not None else None
    if not isinstance(table, exp.Values) or not table.alias_column_names:
        return []
    names = [n.lower() for n in table.alias_column_names]
    if value.name.lower() not in names:
        return []
    i = names.index(value.name.lower())
    return [t.expressions[i] for t in table.expressions if isinstance(t, exp.Tuple) and len(t.expressions) > i]


def _defined_as_map(root: exp.Expr, name: str) -> bool:
    return any(a.alias == name and isinstance(a.this, _MAPS) for a in root.find_all(exp.Alias))


def _java_braces(pattern: str) -> None:
    """Java's regex takes `{` only as a quantifier ({n}, {n,}, {n,m}) unless escaped or in a
    class; RE2 reads any other brace as itself. Spark refuses the pattern."""
    i, depth = 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        elif c == "{" and not depth and not re.match(r"\{\d+(,\d*)?\}", pattern[i:]):
            raise Untranslatable(f"the regular expression {pattern!r}", ENGINE,
                                 "Spark refuses it too (INVALID_PARAMETER_VALUE.PATTERN): Java reads '{' "
                                 "only as a repetition such as {2} or {1,3}; write \\{ for the character")
        i += 1

