"""Runs the parity statements (golden.json, Spark 3.5's answers) through the local engine and
says how each ends, against Spark's answer:

- same: the same rows (column names are not compared: each engine names an expression its way);
- both refuse: Spark refuses the statement and so does the engine, with an error of its own;
- refused: Spark answers and the engine refuses with a clear error (the construct by name);
- different: both answer, with other values;
- answers where Spark refuses: the engine answers what Spark rejects (a type check, a bad
  format): a different answer too;
- internal: the engine raised something other than a statement error (a fault of ours).

`python -m tests.spark.harness` prints the counts and every different answer, for review.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from tests.spark.values import normal, same

HERE = Path(__file__).parent
GOLDEN: dict[str, Any] = json.loads((HERE / "golden.json").read_text())
OK = ("same", "both refuse", "refused")
DIFFERENT = ("different", "answers where Spark refuses")
REPORT: dict[str, int] = {}  # the last run's counts, printed at the end of a pytest run (conftest.py)


def local_engine(spill: Path) -> Any:
    from console.kernel.sql import SqlEngine

    engine = SqlEngine(temp_dir=spill, memory_limit=512 << 20)
    engine.con.execute("SET TimeZone = 'UTC'")  # Spark ran with its session time zone UTC
    # One thread: the statements are tiny, and an order-sensitive answer (first(), a tie in an
    # ORDER BY) must not depend on how threads interleave; Spark's goldens came from local[1].
    engine.con.execute("SET threads = 1")
    return engine


def outcome(engine: Any, entry: dict[str, Any]) -> tuple[str, str]:
    """(how the statement ends, a line saying what the engine gave)."""
    from console.kernel.errors import CellError

    try:
        table = engine.query(entry["sql"], {})
    except CellError as exc:
        return ("both refuse" if "error" in entry else "refused"), exc.message
    except Exception as exc:  # what the harness exists to find
        return "internal", f"{type(exc).__name__}: {exc}"
    return compare(table, entry)


def compare(table: Any, entry: dict[str, Any]) -> tuple[str, str]:
    """How an engine's answer (an Arrow table) ends against Spark's, and what it gave."""
    # by column: a result may repeat a column name, which rows as dicts would fold into one
    rows = [list(r) for r in zip(*(c.to_pylist() for c in table.columns), strict=True)] if table.num_columns else []
    if "error" in entry:
        return "answers where Spark refuses", f"{_short(rows)} (Spark: {entry['error'][:120]})"
    types = entry["types"]
    if table.num_columns != len(types):
        return "different", f"{table.num_columns} columns, Spark {len(types)}"
    try:
        ours = [[_ours(v, t, table.schema.field(i).type) for i, (v, t) in enumerate(zip(row, types, strict=True))]
                for row in rows]
    except TypeError as exc:
        return "different", f"{exc} (Spark {_short(entry['rows'])})"
    theirs = entry["rows"]
    if not entry["ordered"]:
        ours, theirs = sorted(ours, key=json.dumps), sorted(theirs, key=json.dumps)
    if same(ours, theirs):
        return "same", ""
    return "different", f"{_short(ours)}, Spark {_short(theirs)}"


def _ours(v: Any, spark_type: Any, arrow_type: Any) -> Any:
    from tests.spark.intervals import spark_text

    if isinstance(spark_type, str) and spark_type.startswith("interval") and v is not None:
        return spark_text(v, spark_type)
    return normal(v, spark_type)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 160 else text[:157] + "..."


def run_all() -> dict[str, tuple[str, str]]:
    """Every statement's outcome on the local engine, by its key."""
    with tempfile.TemporaryDirectory() as spill:
        engine = local_engine(Path(spill))
        try:
            return {key: outcome(engine, entry) for key, entry in GOLDEN["statements"].items()}
        finally:
            engine.close()


def counts(outcomes: dict[str, tuple[str, str]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for how, _ in outcomes.values():
        out[how] = out.get(how, 0) + 1
    return out


if __name__ == "__main__":
    import sys

    results = run_all()
    if len(sys.argv) > 1:  # every outcome, to compare two runs
        Path(sys.argv[1]).write_text(json.dumps(results, indent=0, sort_keys=True))
    for key, (how, said) in sorted(results.items(), key=lambda kv: GOLDEN["statements"][kv[0]]["source"]):
        if how not in OK:
            print(f"{key} {how}: {GOLDEN['statements'][key]['sql'][:200]}\n    -> {said[:300]}")
    print(counts(results))
