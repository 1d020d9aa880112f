"""What a cell says when Daft refuses or fails a translated select: the construct it names, in
Daft's words, and the setting that runs the statement locally.

The translation (daft.py) refuses what it knows Daft cannot say with Spark's meaning before the
statement leaves the kernel; what Daft itself then refuses while planning, or fails on while
running (a type it cannot cast, a DuckDB function inside it failing on a value), comes back from
the driver as Daft's message (daft_run.py). Either way the user reads the same form:
"the cluster cannot run <construct>: <why>; run it locally: …", never a raw Daft exception.
"""
from __future__ import annotations

import re

HINT = 'run it locally: set sql.engine = "local" where type="conf";'

# Daft's messages that name what it refused, and how to say that construct.
_NAMED = (
    (re.compile(r"write an Arrow interval type"), "an interval in the result (Daft writes no interval to parquet)"),
    (re.compile(r"Function `(\w+)` not found"), r"\1()"),
    (re.compile(r"Unsupported SQL: '([^']{1,80})"), r"\1"),
    (re.compile(r"(\w+) is not (?:yet )?(?:supported|implemented)"), r"\1"),
    (re.compile(r"[Cc]annot cast (\w+) to (\w+)"), r"a cast of \1 to \2"),
    (re.compile(r"[Cc]annot (?:perform|apply) (\w+)"), r"\1"),
)
_NOISE = re.compile(r"^(?:Due to: )?(?:Daft error: )?(?:DaftError::\w+ )?")


def construct(said: str) -> str:
    """The construct Daft's message names ('collect_list()', 'a cast of Utf8 to Int32'), or 'this select'."""
    for pattern, form in _NAMED:
        match = pattern.search(said)
        if match:
            return match.expand(form)
    return "this select"


def cannot_run(said: str) -> str:
    """The cell's message for Daft's refusal or failure `said`."""
    why = _NOISE.sub("", said.strip()).rstrip(".; ") or "Daft gave no reason"
    return f"the cluster cannot run {construct(said)}: {why}; {HINT}"
