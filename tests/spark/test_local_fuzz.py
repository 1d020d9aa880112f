"""No statement ends in an internal error: every parity statement, bent the ways users bend real
ones (an argument made another type, a clause cut off, a literal made a column of a typed
table), runs on the local engine to an answer or a statement error (CellError), never anything
else. Deterministic: the same mutants every run."""
from __future__ import annotations

import random
import re
import tempfile
from pathlib import Path

import pyarrow as pa

from console.kernel.errors import CellError
from tests.spark import harness

_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_SWAPS = ["NULL", "''", "0", "-1", "1e308", "array()", "map()", "x'00'", "s", "n", "d", "ts", "xs", "'2020-13-45'",
          "CAST(NULL AS STRING)", "named_struct('a', 1)"]
# A typed table the mutants may name: text, number, date, timestamp, array and NULL-only columns.
TABLE = pa.table({"s": pa.array(["a", None, "2020-01-01"]), "n": pa.array([1, None, -3], pa.int64()),
                  "d": pa.array([None, 18262, 0], pa.int32()).cast(pa.date32()),
                  "ts": pa.array([0, None, 10**15], pa.int64()).cast(pa.timestamp("us")),
                  "xs": pa.array([[1, None], None, []], pa.list_(pa.int64()))})


def mutants(sql: str, rng: random.Random) -> list[str]:
    out = []
    literals = list(_LITERAL.finditer(sql))
    if literals:
        m = rng.choice(literals)
        swap = rng.choice(_SWAPS)
        bent = sql[:m.start()] + swap + sql[m.end():]
        if swap in ("s", "n", "d", "ts", "xs") and " FROM " not in bent.upper():
            bent += " FROM t"
        out.append(bent)
    cut = rng.randrange(len(sql) // 2, len(sql))
    out.append(sql[:cut])
    return out


def test_no_statement_ends_in_an_internal_error() -> None:
    rng = random.Random(28)
    faults = []
    with tempfile.TemporaryDirectory() as spill:
        engine = harness.local_engine(Path(spill))
        try:
            for entry in harness.GOLDEN["statements"].values():
                for sql in mutants(entry["sql"], rng):
                    try:
                        engine.query(sql, {"t": TABLE})
                    except CellError:
                        pass
                    except Exception as exc:  # what this test exists to find
                        faults.append(f"{sql[:160]}\n    -> {type(exc).__name__}: {str(exc)[:200]}")
        finally:
            engine.close()
    assert not faults, f"{len(faults)} internal errors:\n" + "\n".join(faults[:30])
