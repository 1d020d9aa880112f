"""No statement ends on the cluster in an internal error or in Daft's own words: the parity
statements, bent as test_local_fuzz.py bends them (an argument made another type or a column of a
typed table, a clause cut off), run through the cluster engine (cluster_harness.py: the product's
steps, Daft's native runner) to an answer or a statement error. An error from Daft (planning or
running the statement) reads "the cluster cannot run <construct>: …; run it locally: set
sql.engine = "local" …", with no line of Daft's drawings or of a Rust backtrace in it.
Deterministic: the same mutants every run; every third statement, for the suite's time."""
from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest

from console.kernel.errors import CellError
from tests.spark import harness
from tests.spark.test_local_fuzz import TABLE, mutants

pytest.importorskip("daft")
_DRAWN = set("╭╮╰╯│┆═╞╡─")


def test_no_statement_ends_in_an_internal_error_or_in_dafts_words() -> None:
    from tests.spark.cluster_harness import ClusterEngine

    rng = random.Random(28)
    faults, raw, said = [], [], 0
    with tempfile.TemporaryDirectory() as folder:
        engine = ClusterEngine(Path(folder))
        for entry in list(harness.GOLDEN["statements"].values())[::3]:
            for sql in mutants(entry["sql"], rng):
                try:
                    engine.query(sql, {"t": TABLE})
                except CellError as exc:
                    text = exc.message
                    if text.startswith("the cluster cannot run"):
                        said += 1
                        if 'set sql.engine = "local"' not in text or _DRAWN & set(text) \
                                or "stack backtrace" in text or text.startswith("the cluster cannot run :"):
                            raw.append(f"{sql[:160]}\n    -> {text[:240]}")
                except Exception as exc:  # what this test exists to find
                    faults.append(f"{sql[:160]}\n    -> {type(exc).__name__}: {str(exc)[:200]}")
    assert not faults, f"{len(faults)} internal errors:\n" + "\n".join(faults[:30])
    assert not raw, f"{len(raw)} of Daft's errors not said as the cluster's:\n" + "\n".join(raw[:30])
    assert said, "no mutant reached Daft's own refusals: the test no longer tests them"
