"""docs/cluster-sql.md's table of the parity harness's counts on both engines, made from measured runs.

`python -m tests.spark.report` runs the harness on the local engine (harness.py) and on the
cluster engine (cluster_harness.py) and rewrites the table between the markers below. The parity
tests check each column against what they measure (`mismatches`), so a fix that changes a count
fails until this is run again.
"""
from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).parents[2] / "docs" / "cluster-sql.md"
BEGIN, END = "<!-- parity table: python -m tests.spark.report -->", "<!-- end of parity table -->"
ROWS = {  # label -> outcome (harness.py)
    "the same answer as Spark": "same",
    "Spark answers, the engine refuses by name": "refused",
    "both refuse": "both refuse",
    "a different answer (allowlisted, each with its reason)": "different",
    "an answer where Spark refuses (allowlisted)": "answers where Spark refuses",
    "internal errors": "internal",
}
COLUMNS = ("local", "cluster")


def table(local: dict[str, int], cluster: dict[str, int], statements: int) -> str:
    lines = [f"| {statements:,} statements | local (DuckDB) | cluster (Daft) |", "|---|---|---|"]
    lines += [f"| {label} | {local.get(how, 0):,} | {cluster.get(how, 0):,} |" for label, how in ROWS.items()]
    share = cluster.get("same", 0) / max(local.get("same", 0), 1)
    lines += ["", f"The cluster gives Spark's answer on {share:.1%} of the statements the local engine does."]
    return "\n".join(lines)


def measured(docs: str) -> dict[str, dict[str, int]]:
    """The counts the docs' table states, by column ('local', 'cluster'), then outcome."""
    block = docs.split(BEGIN, 1)[-1].split(END, 1)[0]
    out: dict[str, dict[str, int]] = {c: {} for c in COLUMNS}
    for label, how in ROWS.items():
        match = re.search(rf"^\| {re.escape(label)} \| ([\d,]+) \| ([\d,]+) \|$", block, re.MULTILINE)
        if match:
            for column, value in zip(COLUMNS, match.groups(), strict=True):
                out[column][how] = int(value.replace(",", ""))
    return out


def mismatches(column: str, counts: dict[str, int], statements: int) -> list[str]:
    """Where the docs' column differs from these measured counts (none: the docs say them)."""
    docs = DOCS.read_text()
    if BEGIN not in docs or END not in docs:
        return [f"docs/cluster-sql.md has no parity table between {BEGIN!r} and {END!r}"]
    stated = measured(docs)[column]
    wrong = [f"{label!r}: docs {stated.get(how)}, measured {counts.get(how, 0)}"
             for label, how in ROWS.items() if stated.get(how) != counts.get(how, 0)]
    if f"| {statements:,} statements |" not in docs:
        wrong.append(f"the table is not of {statements:,} statements")
    return wrong


def write(local: dict[str, int], cluster: dict[str, int], statements: int) -> None:
    docs = DOCS.read_text()
    head, _, rest = docs.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOCS.write_text(f"{head}{BEGIN}\n{table(local, cluster, statements)}\n{END}{tail}")


if __name__ == "__main__":
    from tests.spark import cluster_harness, harness

    local_counts = harness.counts(harness.run_all())
    cluster_counts = harness.counts(cluster_harness.run_all())
    write(local_counts, cluster_counts, len(harness.GOLDEN["statements"]))
    print(table(local_counts, cluster_counts, len(harness.GOLDEN["statements"])))
