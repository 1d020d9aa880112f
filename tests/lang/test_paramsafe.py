"""Where a ${name} stands in Spark SQL, read as Spark's lexer does (console/lang/paramsafe.py);
the attacks through a real server are in tests/jobs/test_jobs_param_injection.py."""
from __future__ import annotations

import pytest

from console.lang import paramsafe as P


@pytest.mark.parametrize(("sql", "context"), [
    ("select ${x}", "bare"),
    ("select '${x}'", "'"),
    ('select "${x}"', '"'),
    ("select 'a\\'${x}'", "'"),            # an escaped quote does not end the literal
    ("select 'a\\\\' , ${x}", "bare"),      # an escaped backslash does
    ("select r'a\\' , ${x}", "bare"),       # no escapes in a raw literal: its \\ is text
    ("select r'${x}'", "r'"),
    ("select `a``${x}`", "`"),
    ("select 1 -- ${x}", "comment"),
    ("select 1 -- c\n, ${x}", "bare"),
    ("select /* a /* b */ ${x} */ 1", "comment"),   # Spark's comments nest
    ("select /* a */ ${x}", "bare"),
    ("select 'it''s ${x}'", "'"),           # '' is two literals side by side in Spark: the second holds it
])
def test_the_context_of_a_substitution(sql: str, context: str) -> None:
    assert P.sql_context(sql, sql.index("${x}")) == context


def test_escaped_values_stay_one_spark_string() -> None:
    from console.kernel.sqlengines.spark import parse

    for value in ["x' or 1=1 --", "x\\' or 1=1 --", 'x" or 1=1 --', "a\nb\\", "\\\\'"]:
        for quote in "'\"":
            sql = f"select {quote}${{x}}{quote} as v"
            filled = sql.replace("${x}", P.fill("x", value, "d", P.SQL, sql, sql.index("${x}")))
            (literal,) = [e for e in parse(filled).expressions]
            assert literal.this.this == value, (value, filled)
