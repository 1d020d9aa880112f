"""The statements of the parity harness besides Spark's own function examples (which
make_golden.py reads from Spark itself): ours, written to reach what the examples do not
(NULLs, empty inputs, edge values, the classes issue 28 found), and variants of Spark's examples
with an argument made NULL or empty. Only the statements are ours: every answer is Spark's.
"""
from __future__ import annotations

import re

# A table of rows with NULLs, duplicates and both signs, for aggregates, groupings and windows.
_T = ("(VALUES (1, 'a', 10.5, true), (2, 'b', -3.0, false), (3, NULL, 7.25, NULL), (1, 'a', NULL, true), "
      "(4, 'c', 0.0, false), (NULL, 'b', 2.5, true)) AS t(k, s, v, b)")
_E = "(SELECT * FROM VALUES (1, 'a', 1.0) AS e(k, s, v) WHERE k > 1) e"  # no rows

_UNARY_NUM = ["abs", "sign", "signum", "sqrt", "cbrt", "exp", "expm1", "ln", "log10", "log2", "log1p", "ceil",
              "floor", "round", "bround", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
              "degrees", "radians", "negative", "positive", "bin", "hex", "factorial", "rint", "cot", "sec", "csc",
              "isnan", "bit_count", "asinh", "acosh", "atanh", "even_or_odd"]
_NUM_INPUTS = ["0", "-1", "2.5", "-2.5", "1e300", "CAST(NULL AS INT)", "CAST('NaN' AS DOUBLE)", "127Y", "-32768S",
               "9223372036854775807L", "CAST(1.25 AS DECIMAL(5, 2))"]
_UNARY_STR = ["upper", "lower", "length", "char_length", "bit_length", "octet_length", "reverse", "trim", "ltrim",
              "rtrim", "initcap", "ascii", "soundex", "md5", "sha1", "sha2", "crc32", "base64", "hex", "unhex",
              "unbase64", "space", "lcase", "ucase", "btrim", "to_binary", "try_to_binary"]
_STR_INPUTS = ["'Spark SQL'", "''", "'  padded  '", "NULL", "'ümlaut ß'", "'123'", "'-7.5e2'", "'a\\tb'",
               "'abc'", "'4142'"]
_CASTS = {
    "int": ["'38.9'", "' 7 '", "'x'", "'2147483648'", "38.9", "-38.9", "true", "'1e3'", "CAST('2020-01-01' AS DATE)"],
    "bigint": ["'9223372036854775808'", "'-12'", "1e19", "'0x1F'"],
    "double": ["'1.5'", "' 2 '", "'inf'", "'-Infinity'", "'NaN'", "'1,5'", "true", "CAST('2020-01-01 00:00:01' AS "
               "TIMESTAMP)"],
    "decimal(5, 2)": ["'123.456'", "'12345.6'", "1.005", "'abc'"],
    "boolean": ["'true'", "'T'", "'yes'", "'0'", "'\\t true \\n'", "'maybe'", "1", "0", "2.5"],
    "date": ["'2020-02-30'", "'2020-1-5'", "'2020-01-01T10:00:00'", "'20200101'", "' 2020-03-04 '",
             "CAST('2021-06-07 08:09:10' AS TIMESTAMP)", "'x'"],
    "timestamp": ["'2020-01-01'", "'2020-01-01 10:11:12.345678'", "'2020-01-01T10:11:12Z'", "'2020-01-01 25:00'",
                  "1600000000", "CAST('2020-05-06' AS DATE)", "'1970-01-01 00:00:00+01:00'"],
    "string": ["1.0D", "CAST(1.10 AS DECIMAL(4, 2))", "true", "CAST('2020-01-01' AS DATE)",
               "CAST('2020-01-01 00:00:00' AS TIMESTAMP)", "array(1, NULL, 3)", "map('a', 1)",
               "named_struct('x', 1, 'y', 'b')", "X'4142'", "1e20", "0.1 + 0.2", "CAST(1.5 AS FLOAT)"],
    "binary": ["'abc'", "123", "CAST(123 AS BIGINT)", "-1Y", "CAST(-2 AS SMALLINT)"],
    "float": ["'3.4e39'", "'1.1'"],
    "tinyint": ["300", "'-129'", "127.9"],
    "smallint": ["40000", "'-7.9'"],
}


def own() -> list[str]:
    out: list[str] = []
    for fn in _UNARY_NUM:
        out += [f"SELECT {fn}({x})" for x in _NUM_INPUTS]
    for fn in _UNARY_STR:
        out += [f"SELECT {fn}({x})" for x in _STR_INPUTS]
    for to, inputs in _CASTS.items():
        out += [f"SELECT CAST({x} AS {to})" for x in inputs]
    out += [f"SELECT hex(CAST({x} AS BINARY))" for x in ("123", "-1", "0L", "CAST(255 AS SMALLINT)", "-7Y", "'Spark'")]
    out += [
        # the classes issue 28 found
        "SELECT from_json('[{\"prompt\": \"p\", \"img64\": \"aGk=\"}]', 'array<struct<prompt: string, "
        "img64: string>>')",
        "SELECT from_json('{\"a\": {\"b\": 1}}', 'a struct<b: int>')",
        "SELECT from_json('{\"a\": [1, 2]}', 'struct<a: array<int>>')",
        "SELECT from_json('{\"a\": 1, \"b\": 2}', 'map<string, int>')",
        "SELECT from_json('{\"t\": \"26/08/2015\"}', 't timestamp', map('timestampFormat', 'dd/MM/yyyy'))",
        "SELECT from_json('[1, 2, 3]', 'array<int>')",
        "SELECT from_json('not json', 'a int')",
        "SELECT from_json(NULL, 'a int')",
        "SELECT to_json(map('a', 1, 'b', 2))",
        "SELECT to_json(map(named_struct('a', 1), named_struct('b', 2)))",
        "SELECT to_json(named_struct('a', 1, 'b', array(1, 2), 'c', map('x', 'y')))",
        "SELECT to_json(array(map('a', 1)))",
        "SELECT json_array_length('{\"a\": 1}')",
        "SELECT json_array_length('[1, [2, 3], {}]')",
        "SELECT json_array_length('not json')",
        "SELECT json_object_keys('{\"a\": 1, \"b\": {\"c\": 2}}')",
        "SELECT get_json_object('{\"a\": {\"b\": [1, {\"c\": \"x\"}]}}', '$.a.b[1].c')",
        "SELECT get_json_object('{\"a\": \"x\"}', '$.missing')",
        "SELECT get_json_object('{\"a\": [1, 2]}', '$.a')",
        "SELECT 'a\\tb', 'c\\nd', 'e\\\\f', 'it\\'s', \"dq\\\"x\", 'uni\\u0041'",
        "SELECT length('a\\tb'), '\\%', '\\_', 'a\\zb'",
        "SELECT regexp_extract_all('a1b22c', '([a-z])(\\\\d+)?', 2)",
        "SELECT regexp_extract_all('abc', '(x)?b', 1)",
        "SELECT regexp_extract_all('100-200, 300-400', '(\\\\d+)-(\\\\d+)', 1)",
        "SELECT regexp_extract('abc', '(a)(b)', 3)",
        "SELECT regexp_extract('abc', '(a)', -1)",
        "SELECT regexp_extract_all('abc', '(a)', 2)",
        "SELECT regexp_extract('abc', '(x)?b', 1)",
        "SELECT regexp_extract('abc', 'b', 0)",
        "SELECT regexp_replace('aaa', 'a', 'b', 0)",
        "SELECT regexp_replace('aaa', 'a', 'b', -1)",
        "SELECT regexp_replace('aaa', 'a', 'b', 2)",
        "SELECT regexp_replace('aaa', 'a', 'b', 5)",
        "SELECT regexp_replace('a.b.c', '\\\\.', '/')",
        "SELECT regexp_replace('abc', '(b)', '$1$1')",
        "SELECT regexp_like('abc', '^a'), regexp('abc', 'c$'), 'abc' rlike 'b'",
        "SELECT regexp_count('ababab', 'ab'), regexp_substr('abc123', '[0-9]+'), regexp_instr('abc123', '[0-9]')",
        "SELECT to_binary('abc')",
        "SELECT to_binary('abc', 'utf-8'), to_binary('YWJj', 'base64'), to_binary('616263', 'hex')",
        "SELECT to_binary('abc', NULL)",
        "SELECT to_binary('abc', 'latin')",
        "SELECT to_binary('xyz', 'hex')",
        "SELECT try_to_binary('xyz', 'hex')",
        "SELECT to_number('454', '999'), to_number('$78.12', '$99.99'), to_number('12,454.8-', '99,999.9S')",
        "SELECT to_number('454', 'abc')",
        "SELECT try_to_number('x', '999')",
        "SELECT transform(array(10, 20, 30), (x, i) -> i)",
        "SELECT transform(array(10, 20, 30), (x, i) -> x * i)",
        "SELECT filter(array(1, 2, 3, 4), (x, i) -> i % 2 = 0)",
        "SELECT transform(array(), x -> x + 1)",
        "SELECT transform(CAST(NULL AS ARRAY<INT>), x -> x + 1)",
        "SELECT aggregate(array(1, 2, 3), 0L, (acc, x) -> acc + x)",
        "SELECT exists(array(1, NULL, 3), x -> x = 2), forall(array(1, NULL), x -> x > 0)",
        "SELECT zip_with(array(1, 2), array('a'), (x, y) -> concat(x, y))",
        "SELECT map_filter(map(1, 'a', 2, 'b'), (k, v) -> k > 1), transform_values(map(1, 2), (k, v) -> v * 10)",
        "SELECT array_sort(array(3, NULL, 1)), sort_array(array(3, NULL, 1), false)",
        "SELECT bool_and(1.0)",
        "SELECT bool_and(x) FROM VALUES (1), (0) AS t(x)",
        "SELECT bool_and(b), bool_or(b), every(b), some(b), any(b) FROM " + _T,
        "SELECT map(1, 'a') AS m, count(*) FROM VALUES (1) AS t(x) GROUP BY map(1, 'a')",
        "SELECT m, count(*) FROM (SELECT map('a', x) AS m FROM VALUES (1), (1) AS t(x)) GROUP BY m",
        "SELECT DISTINCT map('a', x) FROM VALUES (1), (1) AS t(x)",
        "SELECT k, DENSE_RANK() OVER (ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM " + _T,
        "SELECT k, RANK() OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM " + _T,
        "SELECT k, ROW_NUMBER() OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM " + _T,
        "SELECT skewness(v), kurtosis(v) FROM " + _T,
        "SELECT skewness(x), kurtosis(x) FROM VALUES (1.0), (2.0), (3.0), (10.0) AS t(x)",
        "SELECT skewness(x), kurtosis(x) FROM VALUES (1.0), (1.0) AS t(x)",
        "SELECT skewness(x), kurtosis(x) FROM VALUES (5.0) AS t(x)",
        "SELECT histogram_numeric(x, 3) FROM VALUES (1), (2), (3), (10) AS t(x)",
        "SELECT btrim('  x  '), btrim('xxaxx', 'x'), timestamp_seconds(1230219000), timestamp_seconds(1.5)",
        "SELECT lpad(X'AB', 4, X'00'), rpad(X'AB', 3, X'CD'), lpad('a', 3), rpad('abc', 2, 'x')",
        "SELECT CAST('3-1' AS INTERVAL YEAR TO MONTH), CAST(INTERVAL '3-1' YEAR TO MONTH AS STRING)",
        "SELECT CAST('1 day' AS INTERVAL), INTERVAL '2' DAY, INTERVAL '1 02:03:04' DAY TO SECOND",
    ]
    aggs = ["count(v)", "count(*)", "sum(v)", "avg(v)", "min(v)", "max(v)", "stddev(v)", "stddev_pop(v)",
            "variance(v)", "var_pop(v)", "collect_list(k)", "collect_set(s)", "first(s)", "last(s)",
            "first(s, true)", "max_by(s, v)", "min_by(s, v)", "count(DISTINCT s)", "sum(DISTINCT k)",
            "percentile(v, 0.5)", "median(v)", "mode(s)", "corr(k, v)", "covar_pop(k, v)", "covar_samp(k, v)",
            "approx_count_distinct(s)", "bit_and(k)", "bit_or(k)", "bit_xor(k)", "count_if(v > 0)",
            "string_agg(s, ',')", "array_agg(k)", "regr_slope(v, k)", "regr_count(v, k)", "product(v)",
            "kurtosis(v)", "skewness(v)", "percentile_approx(v, 0.5)", "any_value(s)", "stddev_samp(v)"]
    for a in aggs:
        out.append(f"SELECT {a} FROM {_T}")
        out.append(f"SELECT {a} FROM {_E}")
        out.append(f"SELECT s, {a} FROM {_T} GROUP BY s")
    windows = ["row_number() OVER (ORDER BY k, v)", "rank() OVER (ORDER BY k)", "dense_rank() OVER (ORDER BY k)",
               "percent_rank() OVER (ORDER BY k)", "cume_dist() OVER (ORDER BY k)", "ntile(3) OVER (ORDER BY k, v)",
               "lag(v) OVER (ORDER BY k, v)", "lead(v, 2, 0) OVER (ORDER BY k, v)",
               "first_value(v) OVER (PARTITION BY s ORDER BY k, v)",
               "last_value(v) OVER (PARTITION BY s ORDER BY k, v)",
               "sum(v) OVER (PARTITION BY s)", "sum(v) OVER (ORDER BY k, v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
               "avg(v) OVER (ORDER BY k RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)",
               "count(*) OVER (PARTITION BY b)", "nth_value(v, 2) OVER (ORDER BY k, v)",
               "max(v) OVER (ORDER BY k, v ROWS UNBOUNDED PRECEDING)"]
    out += [f"SELECT k, s, v, {w} AS w FROM {_T}" for w in windows]
    out += [
        f"SELECT k, count(*) FROM {_T} GROUP BY k ORDER BY k",
        f"SELECT k, count(*) FROM {_T} GROUP BY k ORDER BY k DESC",
        f"SELECT s, k, sum(v) FROM {_T} GROUP BY ROLLUP(s, k)",
        f"SELECT s, b, count(*) FROM {_T} GROUP BY CUBE(s, b)",
        f"SELECT s, k, grouping(s), grouping_id(s, k), count(*) FROM {_T} GROUP BY GROUPING SETS ((s), (k), ())",
        f"SELECT s, sum(v) AS total FROM {_T} GROUP BY s HAVING sum(v) > 1",
        f"SELECT k + 1 AS k1, count(*) FROM {_T} GROUP BY k + 1",
        f"SELECT k IS NULL, count(*) FROM {_T} GROUP BY k IS NULL",
        f"SELECT * FROM {_T} ORDER BY v NULLS LAST, k",
        f"SELECT * FROM {_T} ORDER BY s DESC, k",
        f"SELECT * FROM {_T} WHERE v BETWEEN 0 AND 10 ORDER BY k, v",
        f"SELECT * FROM {_T} WHERE s IN ('a', NULL) ORDER BY k, v",
        f"SELECT * FROM {_T} WHERE s NOT IN ('a', NULL)",
        f"SELECT DISTINCT s FROM {_T}",
        f"SELECT s FROM {_T} UNION SELECT 'z'",
        f"SELECT k FROM {_T} INTERSECT SELECT 1",
        f"SELECT k FROM {_T} EXCEPT SELECT 1",
        f"SELECT k FROM {_T} EXCEPT ALL SELECT 1",
        f"SELECT count(*) FROM (SELECT count(1) FROM {_T} WHERE false) x",
        "SELECT 1 FROM (SELECT count(1) FROM VALUES (1) AS t(a) WHERE false) s",
        "SELECT a.x, b.y FROM VALUES (1), (2), (NULL) AS a(x) LEFT JOIN VALUES (1, 'p'), (3, 'q') AS b(x, y) "
        "ON a.x = b.x",
        "SELECT a.x FROM VALUES (1), (2) AS a(x) LEFT SEMI JOIN VALUES (2) AS b(x) ON a.x = b.x",
        "SELECT a.x FROM VALUES (1), (2) AS a(x) LEFT ANTI JOIN VALUES (2) AS b(x) ON a.x = b.x",
        "SELECT * FROM VALUES (1), (2) AS a(x) FULL OUTER JOIN VALUES (2), (3) AS b(y) ON a.x = b.y",
        "SELECT * FROM VALUES (1), (2) AS a(x) CROSS JOIN VALUES ('u') AS b(y)",
        "SELECT x, explode(array(x, x + 1)) FROM VALUES (1), (5) AS t(x)",
        "SELECT posexplode(array('a', 'b'))",
        "SELECT explode(map('a', 1, 'b', 2))",
        "SELECT explode_outer(array())",
        "SELECT inline(array(named_struct('a', 1, 'b', 'x'), named_struct('a', 2, 'b', 'y')))",
        "SELECT x, y FROM VALUES (array(1, 2)) AS t(xs) LATERAL VIEW explode(xs) e AS y CROSS JOIN VALUES (7) AS u(x)",
        "SELECT stack(2, 1, 'a', 2, 'b')",
        "SELECT x FROM VALUES (1), (2), (3) AS t(x) WHERE x > (SELECT avg(y) FROM VALUES (1), (2) AS u(y))",
        "SELECT x, EXISTS (SELECT 1 FROM VALUES (2) AS u(y) WHERE y = x) FROM VALUES (1), (2) AS t(x)",
        "WITH c AS (SELECT 1 AS a UNION ALL SELECT 2) SELECT sum(a) FROM c",
        "SELECT CASE WHEN NULL THEN 1 WHEN 1 = 1 THEN 2 END, CASE 1 WHEN 2 THEN 'x' ELSE 'y' END",
        "SELECT if(NULL, 1, 2), nvl(NULL, 3), nvl2(NULL, 1, 2), coalesce(NULL, NULL, 5), nullif(2, 2), "
        "ifnull(NULL, 'a')",
        "SELECT 7 / 0, 7 % 0, 7 DIV 2, -7 DIV 2, -7 % 3, pmod(-7, 3), 7 / 2, 1 / 3",
        "SELECT 2147483647 + 1, 9223372036854775807L + 1L, CAST(2147483647 AS INT) * 2",
        "SELECT 0.1 + 0.2, 1.0 / 3, CAST(1 AS DECIMAL(38, 0)) / 3, 12345678901234567890.123 * 10",
        "SELECT 'a' || 'b', concat('a', NULL), concat_ws('-', 'a', NULL, 'b'), concat_ws('-', array('x', 'y'))",
        "SELECT substr('Spark', 0, 2), substr('Spark', -3), substring('Spark', 2), substr('Spark', 2, -1)",
        "SELECT split('a,b,,c', ','), split('a1b2c', '[0-9]'), split('abc', ''), split('a,b,c', ',', 2)",
        "SELECT split('a,b,c', ',')[0], element_at(array(1, 2), 3), array(1, 2)[5], element_at(map('a', 1), 'b')",
        "SELECT instr('abc', 'c'), locate('b', 'abcb', 3), position('b' IN 'abc'), find_in_set('b', 'a,b')",
        "SELECT replace('aXbX', 'X'), replace('aXbX', 'X', 'yy'), translate('abc', 'ab', 'x'), "
        "overlay('Spark' PLACING 'AB' FROM 2)",
        "SELECT format_number(12332.123456, 4), format_number(-0.5, 0), format_string('%05d|%s', 42, 'x')",
        "SELECT printf('%.2f', 3.14159), repeat('ab', 3), repeat('x', -1), left('abc', 2), right('abc', 5)",
        "SELECT date_add('2020-01-31', 1), date_sub('2020-03-01', 1), add_months('2020-01-31', 1), "
        "datediff('2020-03-01', '2020-02-01')",
        "SELECT months_between('2020-03-31', '2020-02-29'), last_day('2020-02-10'), next_day('2020-01-01', 'Mon')",
        "SELECT date_trunc('month', TIMESTAMP '2020-05-17 10:11:12'), trunc(DATE '2020-05-17', 'year')",
        "SELECT year('2020-05-17'), month('2020-05-17'), day('2020-05-17'), dayofweek('2020-05-17'), "
        "weekofyear('2020-01-01')",
        "SELECT hour('2020-05-17 10:11:12'), minute('2020-05-17 10:11:12'), second('2020-05-17 10:11:12.9')",
        "SELECT quarter('2020-05-17'), dayofyear('2020-12-31'), weekday('2020-05-17'), "
        "extract(DOW FROM DATE '2020-05-17')",
        "SELECT unix_timestamp('2020-01-01 00:00:00'), from_unixtime(0), from_unixtime(86400, 'yyyy-MM-dd HH:mm')",
        "SELECT to_date('2020/05/17', 'yyyy/MM/dd'), to_timestamp('17.05.2020 10:11', 'dd.MM.yyyy HH:mm'), "
        "to_date('bad')",
        "SELECT date_format(TIMESTAMP '2020-05-17 13:04:05', 'yyyy-MM-dd hh:mm:ss a E'), "
        "date_format(DATE '2020-05-17', 'QQQ')",
        "SELECT make_date(2020, 2, 30), make_timestamp(2020, 1, 1, 10, 11, 12.5), make_date(2020, 13, 1)",
        "SELECT TIMESTAMP '2020-01-01 10:00:00' + INTERVAL 1 HOUR, DATE '2020-01-31' + INTERVAL 1 MONTH",
        "SELECT DATE '2020-03-01' - DATE '2020-02-01', "
        "TIMESTAMP '2020-01-02 00:00:00' - TIMESTAMP '2020-01-01 00:00:00'",
        "SELECT to_utc_timestamp('2020-01-01 10:00:00', 'Asia/Tokyo'), "
        "from_utc_timestamp('2020-01-01 10:00:00', 'America/New_York')",
        "SELECT array_contains(array(1, 2), 2), array_distinct(array(1, 1, NULL, NULL)), "
        "array_union(array(1), array(1, 2))",
        "SELECT array_intersect(array(1, 2, 2), array(2)), array_except(array(1, 2), array(2)), "
        "arrays_overlap(array(1), array(2))",
        "SELECT array_join(array('a', NULL, 'b'), ','), array_join(array('a', NULL), ',', '?'), "
        "array_position(array(3, 4), 4)",
        "SELECT array_remove(array(1, NULL, 2, 1), 1), array_repeat('x', 2), flatten(array(array(1), array(2, 3)))",
        "SELECT slice(array(1, 2, 3, 4), 2, 2), slice(array(1, 2, 3), -2, 5), sequence(1, 5, 2), sequence(5, 1)",
        "SELECT size(array()), size(map()), size(NULL), cardinality(array(1)), array_max(array(1, NULL, 3)), "
        "array_min(array())",
        "SELECT map_keys(map('a', 1, 'b', 2)), map_values(map('a', 1)), map_concat(map(1, 'a'), map(2, "
        "'b')), map_from_arrays(array(1), array('x'))",
        "SELECT map_from_entries(array(struct(1, 'a'))), map_entries(map('k', 'v')), str_to_map('a:1,b:2'), "
        "map_contains_key(map(1, 2), 1)",
        "SELECT named_struct('a', 1).a, struct(1, 'x'), struct(1 AS p, 'x' AS q).q",
        "SELECT greatest(1, NULL, 3), least('b', 'a'), greatest(1, 2.5), least(CAST(NULL AS INT), NULL)",
        "SELECT 1 = NULL, NULL <=> NULL, 1 <=> NULL, 'a' < 'b', true AND NULL, false AND NULL, true OR NULL",
        "SELECT '1' = 1, '1.0' = 1, 'abc' = 0, true = 1, '2020-01-01' = DATE '2020-01-01'",
        "SELECT 'abc' LIKE 'a%', 'a_c' LIKE 'a\\\\_c', 'ABC' ILIKE 'a%', 'abc' LIKE ANY ('x%', '%c'), "
        "'a%' LIKE 'a!%' ESCAPE '!'",
        "SELECT isnull(NULL), isnotnull(1), nanvl(CAST('NaN' AS DOUBLE), 1.0), "
        "CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)",
        "SELECT round(2.5), round(-2.5), round(2.345, 2), bround(2.5), round(1234.5, -2), ceil(1.234, 1), floor(-1.5)",
        "SELECT round(CAST(2.5 AS DOUBLE)), round(0.125D, 2), pow(2, 10), power(-8, 1.0 / 3), mod(-7, 3), hypot(3, 4)",
        "SELECT shiftleft(1, 31), shiftright(-8, 1), shiftrightunsigned(-8, 1), 5 & 3, 5 | 3, 5 ^ 3, ~5",
        "SELECT conv('ff', 16, 10), conv('-10', 10, 2), conv('zz', 36, 16), bin(-1), hex(-1), unhex('GG')",
        "SELECT log(2, 8), log(0), ln(-1), sqrt(-1), e(), pi(), width_bucket(5.3, 0.2, 10.6, 5)",
        "SELECT uuid() IS NOT NULL, typeof(1), typeof(1.5), typeof('a'), typeof(array(1)), typeof(NULL)",
        "SELECT base64(X'00ff'), unbase64('AP8='), encode('abc', 'utf-8'), decode(X'616263', 'utf-8'), "
        "decode(2, 1, 'a', 2, 'b')",
        "SELECT url_decode('a%20b'), url_encode('a b&c'), parse_url('http://x.test/p?q=1#f', 'QUERY', 'q'), "
        "parse_url('http://x.test:8/p', 'HOST')",
        "SELECT mask('AbCD123-@$#'), mask('abc', 'X', 'x', 'n', NULL), luhn_check('79927398713')",
        "SELECT sentences('Hi there! Good morning.'), levenshtein('kitten', 'sitting'), elt(2, 'a', 'b'), "
        "char(65), chr(256 + 66)",
        "SELECT startswith('abc', 'ab'), endswith('abc', 'bc'), contains('abc', 'b'), contains(NULL, 'b')",
        "SELECT nvl(CAST(NULL AS STRING), 1), coalesce(1, 'a'), if(true, 1, 'a'), CASE WHEN true THEN 1 ELSE 'x' END",
        "SELECT array(1, 'a'), array(1, 2.5), map(1, 'a', 2, NULL), array(NULL)",
    ]
    return out


_STRING = re.compile(r"'(?:[^'\\]|\\.)*'")
_NUMBER = re.compile(r"(?<![\w.'])-?\d+(?:\.\d+)?(?![\w.'])")


def variants(sql: str) -> list[str]:
    """Spark's example with its first quoted text made NULL and made empty, and its first number
    made NULL: the NULL and empty cases the documentation leaves out."""
    out = []
    m = _STRING.search(sql)
    if m:
        out += [sql[:m.start()] + "NULL" + sql[m.end():], sql[:m.start()] + "''" + sql[m.end():]]
    m = _NUMBER.search(sql)
    if m:
        out.append(sql[:m.start()] + "NULL" + sql[m.end():])
    return [v for v in out if v != sql]
