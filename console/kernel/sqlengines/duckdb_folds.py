"""Spark's answers for values written in the statement, worked out here where DuckDB's own
answer differs (parity harness, tests/spark): Java's case mapping, Java's text of a double, a
double narrowed to an integer as Java does, Spark's decimal division, printf of a NULL argument.
Each fold takes only literals, so it is exact; anything else is left to DuckDB.

`fold(node)` returns the node's replacement, or None.
"""
from __future__ import annotations

import decimal
import math
import re

from sqlglot import exp

_LONG = (-(1 << 63), (1 << 63) - 1)
_INT = (-(1 << 31), (1 << 31) - 1)
_WIDTH = {exp.DataType.Type.TINYINT: 8, exp.DataType.Type.SMALLINT: 16, exp.DataType.Type.INT: 32,
          exp.DataType.Type.BIGINT: 64}
_TEXT = (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)
_SPEC = re.compile(r"%(\d+\$)?([-#+ 0,(<]*)(\d*)(\.\d+)?([a-zA-Z%])")


def _double(node: exp.Expr) -> float | None:
    """A literal Spark reads as a DOUBLE (it has an exponent: 1e300), with its sign."""
    if isinstance(node, exp.Neg):
        inner = _double(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string and "e" in node.this.lower():
        return float(node.this)
    return None


def _decimal(node: exp.Expr) -> tuple[decimal.Decimal, int, int] | None:
    """(value, precision, scale) of a literal Spark types as a DECIMAL (or an integer literal,
    which Spark widens to the digits it has beside a decimal), or of a CAST of one to DECIMAL."""
    if isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DECIMAL:
        inner = _decimal(node.this)
        params = [int(p.this.this) for p in node.to.expressions] if node.to.expressions else [10, 0]
        if inner is None or len(params) != 2:
            return None
        return inner[0], params[0], params[1]
    if not isinstance(node, exp.Literal) or node.is_string or "e" in node.this.lower():
        return None
    value = decimal.Decimal(node.this)
    digits, exponent = len(value.as_tuple().digits), -int(value.as_tuple().exponent)
    return value, max(digits, exponent, 1), max(exponent, 0)


def _java_long(value: float) -> int:
    """Java's (long) d: toward zero, NaN 0, saturating at the ends."""
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return _LONG[1] if value > 0 else _LONG[0]
    return max(_LONG[0], min(_LONG[1], int(value)))


def _narrowed(value: float, width: int) -> int:
    """Spark's non-ANSI cast of a double: to a long or int it saturates; to a smallint or tinyint
    it saturates to an int and then wraps (Scala's d.toShort)."""
    whole = _java_long(value)
    if width == 64:
        return whole
    whole = max(_INT[0], min(_INT[1], whole))
    return wrap(whole, width) if width < 32 else whole


def wrap(value: int, width: int) -> int:
    """Two's complement wrap-around of a whole number to `width` bits, as Java's narrowing does."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >= 1 << (width - 1) else value


def java_double_text(value: float) -> str:
    """Java's Double.toString: plain between 1e-3 and 1e7, else d.dddE±n; always a fraction digit."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(value)
        return text if "." in text else text + ".0"
    sign, digits, exponent = decimal.Decimal(repr(value)).as_tuple()
    shown = "".join(map(str, digits)).rstrip("0") or "0"
    point = int(exponent) + len(digits) - 1
    return f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}E{point}"


def _java_case(node: exp.Expr) -> exp.Expr | None:
    """upper/lower/initcap of a text written in the statement, mapped as Java maps it (ß -> SS;
    DuckDB: ẞ). Python's full case mapping is Java's; initcap titles each word's first
    character by itself (Java's Character.toTitleCase keeps ß)."""
    text = node.this
    if not (isinstance(text, exp.Literal) and text.is_string) or text.this.isascii():
        return None
    value = str(text.this)
    if isinstance(node, exp.Upper):
        return exp.Literal.string(value.upper())
    if isinstance(node, exp.Lower):
        return exp.Literal.string(value.lower())
    out, start = [], True
    for c in value.lower():
        title = c.title()
        out.append(title if start and len(title) == 1 else c)
        start = c == " "
    return exp.Literal.string("".join(out))


def _printf_nulls(node: exp.Expr) -> exp.Expr | None:
    """printf('%d %s', NULL, 'x'): Java prints null for a NULL argument (DuckDB's printf is NULL).
    A plain specifier (no flags, no width) whose argument is a written NULL becomes the text."""
    fmt = node.this if isinstance(node, exp.Format) else (node.expressions or [None])[0]
    args = list(node.expressions if isinstance(node, exp.Format) else node.expressions[1:])
    if not (isinstance(fmt, exp.Literal) and fmt.is_string) or not any(isinstance(a, exp.Null) for a in args):
        return None
    kept: list[exp.Expr] = []
    out, at, i = [], 0, 0
    for m in _SPEC.finditer(fmt.this):
        if m.group(5) in "%n":
            continue
        if i >= len(args) or m.group(1) or m.group(5) == "<":
            return None
        if isinstance(args[i], exp.Null):
            if m.group(2) or m.group(3) or m.group(4):
                return None
            out.append(fmt.this[at:m.start()] + ("NULL" if m.group(5).isupper() else "null"))
            at = m.end()
        else:
            kept.append(args[i])
        i += 1
    out.append(fmt.this[at:])
    return exp.Anonymous(this="PRINTF", expressions=[exp.Literal.string("".join(out)), *kept])


def _divided(node: exp.Div) -> exp.Expr | None:
    """A DECIMAL divided, both sides written in the statement: Spark's result type (scale at least
    6, precision capped at 38) and its half-up rounding; DuckDB divides as doubles."""
    a, b = _decimal(node.this), _decimal(node.expression)
    decimals = [isinstance(n, exp.Cast) or "." in n.sql() for n in (node.this, node.expression)]
    if a is None or b is None or not any(decimals):  # whole numbers divide as doubles in Spark
        return None
    (x, p1, s1), (y, p2, s2) = a, b
    scale = max(6, s1 + p2 + 1)
    precision = p1 - s1 + s2 + scale
    if precision > 38:
        whole = precision - scale
        scale = max(38 - whole, min(scale, 6))
        precision = 38
    to = exp.DataType.build(f"DECIMAL({precision}, {scale})")
    if y == 0:
        return exp.Cast(this=exp.Null(), to=to)
    with decimal.localcontext() as ctx:
        ctx.prec = 100
        q = (x / y).quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
    if len(q.as_tuple().digits) > precision:
        return exp.Cast(this=exp.Null(), to=to)
    return exp.Cast(this=exp.Literal.string(str(q)), to=to)


def _cast(node: exp.Cast) -> exp.Expr | None:
    to = node.to.this
    double = _double(node.this)
    if double is not None and to in _WIDTH:
        return exp.Cast(this=exp.Literal.number(_narrowed(double, _WIDTH[to])), to=node.to)
    if double is not None and to in _TEXT:
        return exp.Literal.string(java_double_text(double))
    text = node.this
    if to in _WIDTH and isinstance(text, exp.Literal) and text.is_string and "e" in text.this.lower():
        return exp.Cast(this=exp.Null(), to=node.to)  # Spark reads no exponent in a whole number
    return None


def _infinite(node: exp.Expr) -> exp.Expr | None:
    """asinh/acosh(x) is Spark's log(x + sqrt(x*x ± 1)): infinite once x*x overflows a double."""
    value = _double(node.this)
    if value is None and isinstance(node.this, exp.Literal) and not node.this.is_string:
        value = float(node.this.this)
    if value is None or abs(value) < 1.3407807929942597e154 or math.isinf(value):
        return None
    return exp.Cast(this=exp.Literal.string("Infinity"), to=exp.DataType.build("DOUBLE"))


def _whole_argument(node: exp.Expr) -> exp.Expr | None:
    """hex(1e300), bin(1e300): Spark takes a double's long value (saturating), DuckDB its digits."""
    args = node.expressions if isinstance(node, exp.Anonymous) else [node.this]
    double = _double(args[0]) if len(args) == 1 else None
    if double is None:
        return None
    whole = exp.Literal.number(_java_long(double))
    if isinstance(node, exp.Anonymous):
        node.set("expressions", [whole])
    else:
        node.set("this", whole)
    return node


def _format_number(node: exp.Anonymous) -> exp.Expr | None:
    """format_number(-0.5, 0): Java's DecimalFormat keeps the sign of a negative value rounded to
    zero (-0)."""
    if len(node.expressions) != 2:
        return None
    x, d = node.expressions
    if not (isinstance(x, exp.Neg) and isinstance(d, exp.Literal) and not d.is_string and d.is_int):
        return None
    value = _decimal(x.this)
    places = int(d.this)
    if value is None or places < 0:
        return None
    if value[0].quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_EVEN) != 0:
        return None
    return exp.Literal.string("-0" + ("." + "0" * places if places else ""))


def fold(node: exp.Expr) -> exp.Expr | None:
    if isinstance(node, (exp.Upper, exp.Lower, exp.Initcap)):
        return _java_case(node)
    if isinstance(node, exp.Format):
        return _printf_nulls(node)
    if isinstance(node, exp.Div):
        return _divided(node)
    if isinstance(node, exp.Cast):
        return _cast(node)
    if isinstance(node, (exp.Asinh, exp.Acosh)):
        return _infinite(node)
    if isinstance(node, exp.Hex):
        return _whole_argument(node)
    if isinstance(node, exp.Anonymous):
        name = str(node.name).lower()
        if name == "printf":
            return _printf_nulls(node)
        if name == "bin":
            return _whole_argument(node)
        if name == "format_number":
            return _format_number(node)
    return None
