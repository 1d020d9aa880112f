"""Spark 3.5's own answers (golden.json) against the cluster engine: Daft, with DuckDB computing
inside it what Daft cannot say (console/kernel/sqlengines/daft_duck.py), run without Ray
(cluster_harness.py: the product's steps, Daft's native runner).

Every statement ends as Spark's does, or in a clear refusal; never an internal error. The
cluster's DuckDB functions are the local engine's translation, so it inherits the local
engine's known differences (allowlist_local.json): a different answer here is allowed only
where the local engine gives that same answer and lists it; the cluster adds none of its own.
It answers at least 90% of what the local engine answers the same.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.spark import harness

pytest.importorskip("daft")  # installed by `make setup` beside the pinned set (docs/cluster-sql.md)
ALLOWLIST: dict[str, dict[str, str]] = json.loads((Path(__file__).parent / "allowlist_local.json").read_text())


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple[str, str]]:
    from tests.spark import cluster_harness

    results = cluster_harness.run_all()
    cluster_harness.REPORT.clear()  # what tests/spark/conftest.py prints at the end of the run
    cluster_harness.REPORT.update(harness.counts(results))
    return results


@pytest.fixture(scope="module")
def local() -> dict[str, tuple[str, str]]:
    return harness.run_all()


def _listing(results: dict[str, tuple[str, str]], keys: list[str]) -> str:
    statements: dict[str, Any] = harness.GOLDEN["statements"]
    return "\n".join(f"{k} {results[k][0]}: {statements[k]['sql'][:160]}\n    -> {results[k][1][:240]}"
                     for k in keys[:40])


def test_no_internal_errors(outcomes: dict[str, tuple[str, str]]) -> None:
    internal = sorted(k for k, (how, _) in outcomes.items() if how == "internal")
    assert not internal, "internal errors (a statement must end in an answer or a clear error):\n" + _listing(
        outcomes, internal)


def test_no_different_answer_of_its_own(outcomes: dict[str, tuple[str, str]],
                                        local: dict[str, tuple[str, str]]) -> None:
    own = sorted(k for k, (how, said) in outcomes.items() if how in harness.DIFFERENT
                 and not (k in ALLOWLIST and local[k] == (how, said)))
    assert not own, f"{len(own)} answers differ from Spark's (and from the local engine's):\n" + _listing(
        outcomes, own)


def test_refusals_name_the_construct_and_the_local_setting(outcomes: dict[str, tuple[str, str]]) -> None:
    """What Daft itself refuses or fails on reads as the cluster's refusal, with the way out."""
    raw = sorted(k for k, (how, said) in outcomes.items() if how in ("refused", "both refuse")
                 and said.startswith("the cluster cannot run") and 'sql.engine = "local"' not in said)
    assert not raw, _listing(outcomes, raw)


def test_the_cluster_answers_what_the_local_engine_answers(outcomes: dict[str, tuple[str, str]],
                                                           local: dict[str, tuple[str, str]]) -> None:
    same_locally = [k for k, (how, _) in local.items() if how == "same"]
    share = sum(outcomes[k][0] == "same" for k in same_locally) / len(same_locally)
    assert share >= 0.9, f"the cluster answers {share:.1%} of the local engine's same answers"


def test_the_docs_state_the_measured_counts(outcomes: dict[str, tuple[str, str]]) -> None:
    """docs/cluster-sql.md's table (its cluster column) is this run's counts: `python -m tests.spark.report`."""
    from tests.spark import report

    wrong = report.mismatches("cluster", harness.counts(outcomes), len(outcomes))
    assert not wrong, "docs/cluster-sql.md (python -m tests.spark.report): " + "; ".join(wrong)


def test_the_cluster_translates_expressions_as_the_local_engine() -> None:
    """daft_local.local_sql runs the local engine's steps on a parsed tree (the cluster's DuckDB
    functions are made that way): for every statement it says what duckdb.transpile says."""
    from console.kernel.sqlengines import duckdb as to_duckdb
    from console.kernel.sqlengines.daft_local import local_sql
    from console.kernel.sqlengines.spark import parse

    unlike = []
    for key, entry in harness.GOLDEN["statements"].items():
        try:
            expected: str | None = to_duckdb.transpile(entry["sql"])[0]
        except Exception:
            expected = None
        try:
            got: str | None = local_sql(parse(entry["sql"]), frozenset())
        except Exception:
            got = None
        if got != expected:
            unlike.append(key)
    assert not unlike, f"{len(unlike)} statements translated otherwise: {unlike[:10]}"
