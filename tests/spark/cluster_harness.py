"""The parity statements (golden.json) through the cluster engine, without Ray: the product's own
steps in this process. daft.py translates the statement as the router does (a refusal becomes the
cell's error as there), daft_run.answer runs it as the driver does, with Daft's native runner
instead of Ray (the same plan and functions; the cluster tests run a few on Ray), the driver's
error becomes the cell's error as cluster.py says it, and the result is read back from the
parquet files Daft wrote, as a distributed table is.

An error the product would not say as a statement's (the driver's answer without "cannot_run",
or an exception of ours) is "internal", as in harness.py.

`python -m tests.spark.cluster_harness` prints the counts and every different answer.
"""
from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from tests.spark.harness import GOLDEN, OK, counts, outcome

REPORT: dict[str, int] = {}  # the last run's counts, printed at the end of a pytest run (conftest.py)


class ClusterEngine:
    """`query(sql, tables)` as harness.outcome expects it, on the cluster's path (no catalog tables)."""

    def __init__(self, folder: Path) -> None:
        from console.kernel.sqlengines.cluster_driver import DAFT_ENV

        os.environ.update(DAFT_ENV)  # before daft is imported, as the driver does
        import daft

        # Daft's runner is the process's, set once: a test that ran Daft before in this process
        # (tests/kernel/test_sql_daft_parity.py, on the same pytest-xdist worker) already made it
        # native, and a second set_runner_native() raises.
        if daft.get_or_infer_runner_type() != "native":
            daft.set_runner_native()
        self.folder = folder

    def query(self, sql: str, tables: dict[str, Any]) -> Any:
        import sqlglot

        from console.kernel.catalog import DistributedTable
        from console.kernel.errors import CellError
        from console.kernel.sql import untranslatable_error
        from console.kernel.sqlengines import daft as to_daft
        from console.kernel.sqlengines.cluster import reply_error
        from console.kernel.sqlengines.cluster_driver import answer_of
        from console.kernel.sqlengines.daft_run import answer
        from console.kernel.sqlengines.spark import Untranslatable
        from console.wire.channel import new_request_id
        from console.wire.daft import DriverQuery, TableInput

        from console.kernel.sqlengines.spark import numeric_columns

        # the tables as the router describes them (router._inputs), handed over as Arrow IPC files
        # as cluster.py hands over a table the kernel holds
        columns = tuple(dict.fromkeys(n for t in tables.values() for n in t.schema.names))
        schemas = tuple((name, t.schema) for name, t in tables.items())
        try:
            plan = to_daft.transpile(sql, columns, numeric_columns([s for _, s in schemas]), schemas)
        except Untranslatable as exc:
            raise untranslatable_error(exc, sql, 1, 1) from None
        except sqlglot.errors.SqlglotError as exc:  # the router hands it to the local engine, which says so
            raise CellError("sql", f"SQL syntax error: {exc}", 1, 1) from None
        missing = [ref for ref in plan.refs if ref not in tables]
        if missing:
            names = ", ".join(sorted(tables)) or "none yet"
            raise CellError("sql", f"table '{missing[0]}' not found; tables in this session: {names}", 1, 1)
        out = self.folder / uuid.uuid4().hex
        out.mkdir()
        # the driver's own messages (console/wire/daft.py), run here by Daft's native runner
        inputs = {ref: TableInput(ipc=self._ipc(tables[ref])) for ref in plan.refs}
        query = DriverQuery(new_request_id(), plan.sql, inputs, str(out), functions=plan.functions, values=plan.values)
        reply = answer_of(query.request_id, answer(query.request()))
        if reply.error:
            if not reply.cannot_run:  # a fault of ours, not the statement's
                raise RuntimeError(reply.error)
            raise reply_error(reply, out, 1, 1)
        return DistributedTable(reply.files, "result", out, 1 << 30).table()

    def _ipc(self, table: Any) -> str:
        import pyarrow as pa

        path = self.folder / f"input-{uuid.uuid4().hex}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        return str(path)

    def close(self) -> None:
        pass


def run_all(keys: list[str] | None = None) -> dict[str, tuple[str, str]]:
    """Every statement's outcome on the cluster engine, by its key."""
    statements = GOLDEN["statements"]
    with tempfile.TemporaryDirectory() as folder:
        engine = ClusterEngine(Path(folder))
        return {key: outcome(engine, statements[key]) for key in (keys or list(statements))}


if __name__ == "__main__":
    import sys

    results = run_all()
    if len(sys.argv) > 1:  # every outcome, to compare two runs
        Path(sys.argv[1]).write_text(json.dumps(results, indent=0, sort_keys=True))
    for key, (how, said) in sorted(results.items(), key=lambda kv: GOLDEN["statements"][kv[0]]["source"]):
        if how not in OK:
            print(f"{key} {how}: {GOLDEN['statements'][key]['sql'][:200]}\n    -> {said[:300]}")
    print(counts(results))
