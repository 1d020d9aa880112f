"""Spark 3.5's own answers (golden.json, made by make_golden.py) against the local engine (DuckDB).

Every statement must end as Spark's does: the same rows; a refusal where Spark refuses too; or a
clear refusal (a statement error naming what it cannot run) where Spark answers. A different
answer, or an answer where Spark refuses, is allowed only when allowlist_local.json lists it with
its reason (reviewed: each is a known difference, not yet fixed); an internal error never. An
entry that no longer differs must leave the list, so the list only shrinks as fixes land.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.spark import harness

ALLOWLIST: dict[str, dict[str, str]] = json.loads((Path(__file__).parent / "allowlist_local.json").read_text())


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple[str, str]]:
    results = harness.run_all()
    harness.REPORT.clear()  # what tests/spark/conftest.py prints at the end of the run
    harness.REPORT.update(harness.counts(results))
    listed = [k for k, (how, _) in results.items() if how in harness.DIFFERENT and k in ALLOWLIST]
    harness.REPORT["allowlisted"] = len(listed)
    return results


def _listing(results: dict[str, tuple[str, str]], keys: list[str]) -> str:
    statements: dict[str, Any] = harness.GOLDEN["statements"]
    return "\n".join(f"{k} {results[k][0]}: {statements[k]['sql'][:160]}\n    -> {results[k][1][:240]}"
                     for k in keys[:40])


def test_the_harness_is_big_enough() -> None:
    assert len(harness.GOLDEN["statements"]) >= 1000
    assert harness.GOLDEN["spark"].startswith("3.5")


def test_no_golden_answer_depends_on_the_day() -> None:
    """An answer that holds the clock, chance or the machine is no answer to compare: it fails
    the day after it was made (`SELECT current_date` did, in CI)."""
    from tests.spark.make_golden import _SKIP

    moving = [k for k, e in harness.GOLDEN["statements"].items() if _SKIP.search(e["sql"])]
    assert not moving, f"golden.json holds answers that change between runs: {moving[:10]}"


def test_the_clock_is_today_in_the_session_time_zone(tmp_path: Path) -> None:
    """What the goldens leave out, checked against the clock instead: Spark's current_date is
    the day in the session time zone (UTC here), and current_timestamp is now."""
    import datetime as dt

    engine = harness.local_engine(tmp_path)
    try:
        before = dt.datetime.now(dt.timezone.utc)
        row = engine.query("SELECT current_date AS d, current_timestamp AS t", {}).to_pylist()[0]
        after = dt.datetime.now(dt.timezone.utc)
    finally:
        engine.close()
    assert row["d"] in {before.date(), after.date()}
    stamp = row["t"] if row["t"].tzinfo else row["t"].replace(tzinfo=dt.timezone.utc)
    assert before - dt.timedelta(seconds=1) <= stamp <= after + dt.timedelta(seconds=1)


def test_no_internal_errors(outcomes: dict[str, tuple[str, str]]) -> None:
    internal = sorted(k for k, (how, _) in outcomes.items() if how == "internal")
    assert not internal, "internal errors (a statement must end in an answer or a clear error):\n" + _listing(
        outcomes, internal)


def test_no_different_answer_outside_the_allowlist(outcomes: dict[str, tuple[str, str]]) -> None:
    unlisted = sorted(k for k, (how, _) in outcomes.items() if how in harness.DIFFERENT and k not in ALLOWLIST)
    assert not unlisted, f"{len(unlisted)} answers differ from Spark's:\n" + _listing(outcomes, unlisted)


def test_the_allowlist_lists_only_what_still_differs(outcomes: dict[str, tuple[str, str]]) -> None:
    stale = sorted(k for k in ALLOWLIST if k not in outcomes or outcomes[k][0] not in harness.DIFFERENT)
    assert not stale, "no longer different (remove from allowlist_local.json): " + ", ".join(stale)
    assert all(entry.get("reason") for entry in ALLOWLIST.values())


def test_same_share(outcomes: dict[str, tuple[str, str]]) -> None:
    """Most of what Spark answers, the local engine answers the same (the rest: refused by name)."""
    answered = [how for key, (how, _) in outcomes.items() if "error" not in harness.GOLDEN["statements"][key]]
    assert answered.count("same") / len(answered) >= 0.6, harness.counts(outcomes)


def test_the_docs_state_the_measured_counts(outcomes: dict[str, tuple[str, str]]) -> None:
    """docs/cluster-sql.md's table is the harnesses' result (its local column, this run's counts):
    a fix that changes a count runs `python -m tests.spark.report`, which writes both columns."""
    from tests.spark import report

    wrong = report.mismatches("local", harness.counts(outcomes), len(outcomes))
    assert not wrong, "docs/cluster-sql.md (python -m tests.spark.report): " + "; ".join(wrong)
