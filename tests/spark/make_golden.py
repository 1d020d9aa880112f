"""Write golden.json: Apache Spark 3.5's own answer to every statement of the parity harness.

Run by hand, from the repository root, with pyspark in a venv of its own (Java 17 from Debian;
pyspark is no dependency of the product, and `make test` needs neither it nor Java):

    python3 -m venv /tmp/sparkenv && /tmp/sparkenv/bin/pip install pyspark==3.5.7
    /tmp/sparkenv/bin/python -m tests.spark.make_golden

The statements: every example of Spark's built-in functions (the `Examples:` of each
function's documentation, read from Spark itself, as `DESCRIBE FUNCTION EXTENDED` shows them),
variants of them with an argument NULL (corpus.variants), and ours (corpus.own). Spark runs them
with its defaults as Byzer ran it: ANSI mode off, session time zone UTC. A statement whose
answer changes between two runs (rand(), current_date(), …) is left out, and so is one Spark
cannot parse or whose function it lacks (those are not Spark SQL). Each entry holds the
statement, where it comes from, and Spark's answer: its columns' types and rows (values in the
form of tests/spark/values.py; intervals as Spark prints them), or its error.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from tests.spark.corpus import own, variants
from tests.spark.values import normal

GOLDEN = Path(__file__).with_name("golden.json")
# Examples whose answer is not Spark SQL's to give (the machine, the clock, chance, the JVM).
_SKIP = re.compile(r"\b(rand|randn|random|uuid|shuffle|current_\w+|now|curdate|localtimestamp|input_file_\w+|"
                   r"monotonically_increasing_id|spark_partition_id|version|user|session_user|reflect|java_method|"
                   r"try_reflect|assert_true|raise_error|aes_\w+)\s*\("
                   # the clock's words Spark also takes without parentheses: `SELECT current_date` held
                   # the day the goldens were made, and failed CI the day after
                   r"|\b(current_date|current_timestamp|current_timezone|current_user|localtimestamp)\b", re.I)
# Spark's refusals that mean "not Spark 3.5 SQL at all", not a refusal of what the statement asks.
_NOT_SQL = ("PARSE_SYNTAX_ERROR", "UNRESOLVED_ROUTINE", "TABLE_OR_VIEW_NOT_FOUND")


def key(sql: str) -> str:
    """A statement's stable name (the allowlist refers to statements by it)."""
    return hashlib.sha1(sql.encode()).hexdigest()[:12]


def examples(spark: Any) -> list[tuple[str, str]]:
    """(statement, "doc:<function>") for each example in Spark's function documentation."""
    registry = spark._jsparkSession.sessionState().functionRegistry()
    ident = spark._jvm.org.apache.spark.sql.catalyst.FunctionIdentifier
    out = []
    for name in sorted({r.function for r in spark.sql("SHOW FUNCTIONS").collect()}):
        info = registry.lookupFunction(ident.apply(name))
        if info.isEmpty():
            continue
        for line in (info.get().getExamples() or "").splitlines():
            line = line.strip()
            if line.startswith("> ") and re.match(r"(SELECT|WITH)\b", line[2:], re.I):
                out.append((line[2:].rstrip().rstrip(";"), f"doc:{name}"))
    return out


def ordered(sql: str) -> bool:
    """Whether the row order is part of the answer: an ORDER BY outside every parenthesis at the end."""
    depth, tail = 0, []
    for ch in sql:
        depth += ch == "("
        depth -= ch == ")"
        tail.append(ch if depth == 0 else " ")
    return re.search(r"\border\s+by\b", "".join(tail), re.I) is not None


class Unrecordable(Exception):
    """Spark answered, but pyspark cannot hand the answer over (a CalendarInterval column, an
    array of intervals): the statement is left out rather than recorded as a refusal."""


def answer(spark: Any, sql: str) -> dict[str, Any]:
    df = spark.sql(sql)
    try:
        fields = df.schema.fields
    except Exception as exc:
        if "CANNOT_PARSE_DATATYPE" in str(exc):
            raise Unrecordable(str(exc)) from None
        raise
    if any("interval" in f.dataType.simpleString() and not f.dataType.simpleString().startswith("interval")
           for f in fields):
        raise Unrecordable("an interval inside another type")
    # pyspark cannot collect every interval type; Spark prints them all, so they come as its text.
    cols = [f"CAST(`{f.name}` AS STRING)" if "interval" in f.dataType.simpleString() else f"`{f.name}`"
            for f in fields]
    if any(c.startswith("CAST") for c in cols):
        names = [f"c{i}" for i in range(len(fields))]
        df = df.toDF(*names).selectExpr(*[c.replace(f.name, n, 1) for c, f, n in zip(cols, fields, names, strict=True)])
    types = [f.dataType.jsonValue() for f in fields]
    collected = df.collect()
    try:
        rows = [[normal(v, t) for v, t in zip(row, types, strict=True)] for row in collected]
    except TypeError as exc:
        raise Unrecordable(str(exc)) from None
    return {"columns": [f.name for f in fields], "types": types, "rows": rows}


def main() -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("parity")
             .config("spark.sql.session.timeZone", "UTC").config("spark.sql.ansi.enabled", "false")
             .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("OFF")
    docs = examples(spark)
    statements = docs + [(v, f"variant:{src[4:]}") for sql, src in docs for v in variants(sql)]
    statements += [(sql, "ours") for sql in own()]
    entries: dict[str, dict[str, Any]] = {}
    for sql, source in statements:
        if key(sql) in entries or _SKIP.search(sql):
            continue
        entry: dict[str, Any] = {"sql": sql, "source": source, "ordered": ordered(sql)}
        try:
            entry |= answer(spark, sql)
            if answer(spark, sql) != {k: entry[k] for k in ("columns", "types", "rows")}:
                continue  # not deterministic
        except Unrecordable:
            continue
        except Exception as exc:  # Spark's refusal is its answer
            text = str(exc).strip().split("\n")[0]
            if any(cls in text for cls in _NOT_SQL) or source.startswith("doc:") and "SparkUpgrade" in text:
                continue
            entry["error"] = text[:240]
        entries[key(sql)] = entry
    out = {"spark": spark.version, "settings": {"spark.sql.ansi.enabled": False, "spark.sql.session.timeZone": "UTC"},
           "statements": entries}
    GOLDEN.write_text(json.dumps(out, indent=0, sort_keys=True, ensure_ascii=False) + "\n")
    spark.stop()
    print(f"{len(entries)} statements, {sum('error' in e for e in entries.values())} refused by Spark")


if __name__ == "__main__":
    main()
