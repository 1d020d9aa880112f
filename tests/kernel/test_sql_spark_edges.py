"""The local engine at the edges issue 28's last differences found (tests/spark holds Spark's own
answers to the statements that found them): other values of the same shapes, answered as Spark
3.5 answers them, and each refusal narrow (the shape that differs refused, its neighbours answered)."""
from __future__ import annotations

import decimal
import math

import pytest

from console.kernel.errors import CellError
from console.kernel.sql import SqlEngine


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> SqlEngine:
    eng = SqlEngine(temp_dir=tmp_path_factory.mktemp("spill"), memory_limit=256 << 20)
    eng.con.execute("SET TimeZone = 'UTC'")
    return eng


def one(engine: SqlEngine, sql: str) -> list[object]:
    return list(engine.query(sql, {}).to_pylist()[0].values())


def refused(engine: SqlEngine, sql: str) -> str:
    with pytest.raises(CellError) as info:
        engine.query(sql, {})
    assert "DuckDB" in info.value.message
    return info.value.message


def test_java_case_mapping_of_written_text(engine: SqlEngine) -> None:
    assert one(engine, "SELECT upper('straße'), lower('ÀB'), initcap('éLAN ßx'), upper('plain')") == [
        "STRASSE", "àb", "Élan ßx", "PLAIN"]


def test_doubles_written_in_the_statement(engine: SqlEngine) -> None:
    nan, minus = one(engine, "SELECT sign(CAST('NaN' AS DOUBLE)), signum(CAST(-2.5 AS DOUBLE))")
    assert isinstance(nan, float) and math.isnan(nan) and minus == -1.0
    assert one(engine, "SELECT CAST(1e19 AS int), CAST(2.5e0 AS bigint), CAST(-1e30 AS bigint)") == [
        2147483647, 2, -(1 << 63)]
    assert one(engine, "SELECT CAST(1e-5 AS string), CAST(1.5e3 AS string)") == ["1.0E-5", "1500.0"]
    assert one(engine, "SELECT hex(-1e300), asinh(-1e300), acosh(2e200)") == [
        "8000000000000000", math.inf, math.inf]


def test_text_with_an_exponent_is_no_whole_number(engine: SqlEngine) -> None:
    assert one(engine, "SELECT CAST('2e1' AS bigint), CAST('12' AS int), space('1e1')") == [None, 12, None]


def test_decimal_division_takes_sparks_scale(engine: SqlEngine) -> None:
    assert one(engine, "SELECT 10.0 / 4, 2.50 / 3, 1.0 / 0, 1 / 4") == [
        decimal.Decimal("2.500000"), decimal.Decimal("0.833333"), None, 0.25]


def test_printf_of_a_null_argument_prints_null(engine: SqlEngine) -> None:
    assert one(engine, "SELECT printf('%s|%d|%S', NULL, 5, NULL), format_string('%d%%', NULL)") == [
        "null|5|NULL", "null%"]
    assert "Decimal" in refused(engine, "SELECT format_string('%e', 2.5)")


def test_refused_only_where_the_values_differ(engine: SqlEngine) -> None:
    assert "tie" in refused(engine, "SELECT mode(s) FROM VALUES ('x'), ('y') AS t(s)")
    assert one(engine, "SELECT mode(s) FROM VALUES ('x'), ('x'), ('y') AS t(s)") == ["x"]
    assert "hash" in refused(engine, "SELECT collect_set(s) FROM VALUES ('x'), ('y'), ('x') AS t(s)")
    assert one(engine, "SELECT collect_set(s) FROM VALUES ('x'), ('x') AS t(s)") == [["x"]]
    assert one(engine, "SELECT collect_set(n) FROM VALUES (2), (1), (2) AS t(n)") == [[1, 2]]


def test_what_spark_refuses_at_analysis(engine: SqlEngine) -> None:
    assert "PATTERN" in refused(engine, "SELECT regexp_like('a{', 'a{')")
    assert one(engine, "SELECT regexp_like('a{', 'a\\\\{'), regexp_like('a{', '[{]'), regexp_like('aa', 'a{2}')") == [
        True, True, True]
    assert "FOLDABLE" in refused(engine, "SELECT named_struct('a', 1, NULL, 2)")
    assert one(engine, "SELECT named_struct('NULL', 1).`NULL`") == [1]
    assert "MAP" in refused(engine, "SELECT DISTINCT map('k', 1) AS m")
    assert "booleans" in refused(engine, "SELECT bool_or(x) FROM VALUES (1.5) AS t(x)")
    assert one(engine, "SELECT bool_or(x) FROM VALUES (true), (false) AS t(x)") == [True]


def test_arrays_dates_and_smallints(engine: SqlEngine) -> None:
    assert one(engine, "SELECT array_except(array(1, NULL, 1, 2, NULL), array(2))") == [[1, None]]
    assert one(engine, "SELECT array_except(array(1, NULL), array(NULL))") == [[1]]
    days = one(engine, "SELECT DATE '2020-01-03' - DATE '2020-01-01'")[0]
    assert (days.months, days.days, days.nanoseconds) == (0, 2, 0)  # type: ignore[attr-defined]
    assert one(engine, "SELECT negative(-128Y), -(-7S)") == [-128, 7]
    assert one(engine, "SELECT CAST(named_struct('a', NULL, 'b', true) AS string)") == ["{null, true}"]
    assert one(engine, "SELECT regexp_extract('1-2', '(\\\\d)-(\\\\d)', NULL)") == [None]


def test_bitmaps_take_sparks_layout(engine: SqlEngine) -> None:
    out = one(engine, "SELECT hex(bitmap_construct_agg(bitmap_bit_position(c))) FROM VALUES (9), (10), (NULL) AS t(c)")
    assert isinstance(out[0], str) and out[0].startswith("000300") and len(out[0]) == 8192
