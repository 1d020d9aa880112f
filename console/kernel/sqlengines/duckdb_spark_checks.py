"""Statements Spark 3.5 refuses at analysis that DuckDB would answer: refused here too, with
Spark's reason, so the local engine never gives an answer Spark would not (tests/spark checks)."""
from __future__ import annotations

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
