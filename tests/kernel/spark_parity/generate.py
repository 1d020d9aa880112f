"""Write goldens.json: each snippet's answer from Apache Spark itself (the truth Byzer users had).

Run once, by hand, with pyspark 3.5.7 and Java 17 (not a dependency of the product):
    python3 -m venv /tmp/sparkvenv && /tmp/sparkvenv/bin/pip install pyspark==3.5.7
    /tmp/sparkvenv/bin/python -m tests.kernel.spark_parity.generate     # from the repository root
Spark 3 defaults (ANSI mode off), in UTC.
"""
from __future__ import annotations

import json
from pathlib import Path

from tests.kernel.spark_parity.compare import answer
from tests.kernel.spark_parity.data import SCHEMA, rows
from tests.kernel.spark_parity.snippets import SNIPPETS

GOLDENS = Path(__file__).with_name("goldens.json")


def main() -> None:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("parity")
             .config("spark.sql.session.timeZone", "UTC").config("spark.sql.ansi.enabled", "false")
             .config("spark.ui.enabled", "false").getOrCreate())
    ddl = ", ".join(f"{name} {kind}" for name, kind, _ in SCHEMA)
    spark.createDataFrame([tuple(r[n] for n, _, _ in SCHEMA) for r in rows()], ddl).createOrReplaceTempView("t")
    out: dict[str, object] = {"spark": spark.version}
    for name, sql, ordered in SNIPPETS:
        try:
            df = spark.sql(sql)
            out[name] = answer(df.columns, [list(r) for r in df.collect()], ordered)
        except Exception as exc:  # Spark refuses it too: recorded, and no engine may answer
            out[name] = {"error": str(exc).split("\n")[0][:300]}
    GOLDENS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
