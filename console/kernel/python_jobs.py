"""`run … as Ray` / `!ray on` / annotated Python cells → a PythonJob, and `run … as TableRepartition`.

Jobs are built from what a session holds (its `JobSource` view), never from the session itself,
so this module and console/kernel/session.py import one way only.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

import pyarrow as pa

from console.actors.fragments import FRAGMENTS_KEY
from console.kernel.catalog import Catalog, Entry, LazyTable, as_table
from console.kernel.errors import CellError
from console.kernel.job import PythonJob
from console.lang import Run
from console.worker.context import PARAMS_KEY


class JobSource(Protocol):
    """What a job is built from: the session's catalog and its `!python conf/env` settings."""

    tables: Catalog
    python_conf: dict[str, str]
    python_env: dict[str, str]
    partitions: dict[str, int]  # run … as TableRepartition


class Runtime(Protocol):
    """The Python runtime's one call a job needs (console.kernel.python_runtime.PythonRuntime)."""

    def run(self, job: PythonJob) -> pa.Table | None: ...

# Options of the Ray statement that are not conf: they name tables or carry the code.
_NOT_CONF = ("inputTable", "outputTable", "code", "model", "confTable", "autoOutput")


def _entry(session: JobSource, name: str, stmt: Run, role: str) -> Entry:
    """The catalog entry, not read: a loaded table reaches the actors without passing through memory."""
    entry = session.tables.entry(name)
    if entry is None:
        names = ", ".join(sorted(session.tables)) or "none yet"
        raise CellError("data", f"{role} table '{name}' not found; tables in this session: {names}",
                        stmt.line, stmt.column)
    return entry


def _table(session: JobSource, name: str, stmt: Run, role: str) -> pa.Table:
    return as_table(_entry(session, name, stmt, role))


def _conf_rows(table: pa.Table, name: str, stmt: Run) -> dict[str, str]:
    """A confTable: its first two columns are key and value (MLSQL passes e.g. rayAddress this way)."""
    if table.num_columns < 2:
        raise CellError("data", f"confTable '{name}' needs two columns (key, value); it has {table.num_columns}",
                        stmt.line, stmt.column)
    keys, values = table.column(0).to_pylist(), table.column(1).to_pylist()
    return {str(k): "" if v is None else str(v) for k, v in zip(keys, values, strict=True) if k is not None}


def build_job(session: JobSource, stmt: Run) -> PythonJob:
    """The PythonJob a Ray statement describes: session conf/env merged with the statement's options."""
    opts = stmt.options
    input_name: str | None = opts.get("inputTable") or stmt.input
    if input_name is not None and input_name.lower() == "command":  # MLSQL's name for "no input table"
        input_name = None
    conf = dict(session.python_conf)
    conf.update({k: v for k, v in opts.items() if k not in _NOT_CONF})
    if opts.get("confTable"):
        conf.update(_conf_rows(_table(session, opts["confTable"], stmt, "confTable"), opts["confTable"], stmt))
    declared, values = getattr(session, "params", None), getattr(session, "variables", {})
    if declared:  # the parameters' values now (a run's overrides included): context.params
        conf[PARAMS_KEY] = json.dumps({k: values.get(k, "") for k in declared})
    model = opts.get("model")
    input_table = _entry(session, input_name, stmt, "input") if input_name else None
    if input_table is not None and input_name is not None:
        origin = lookup_ci(getattr(session, "origins", {}), input_name)
        direct = origin.conf_value(input_table) if origin is not None else None
        # Direct reads unless the cell says directRead=false, or the rows are in memory already
        # (then one write to /dev/shm beats decoding the files again).
        on = conf.get("directRead", "auto").lower() != "false"
        if direct is not None and on and isinstance(input_table, LazyTable) and not input_table.loaded:
            input_table.dataset()  # the files are still the loaded ones, or a clear error now
            conf[FRAGMENTS_KEY] = direct  # actors read the loaded files; the kernel writes nothing
    code = opts["code"]
    included = re.fullmatch(r"\s*py\.(\w+)\s*", code)
    if included:  # code="py.t": the code that !pyInclude read into table t (its `content` column)
        source = _table(session, included.group(1), stmt, "code")
        if "content" not in source.column_names or source.num_rows == 0:
            raise CellError("python", f"table '{included.group(1)}' holds no code: !pyInclude makes one with a "
                                      "'content' column", stmt.line, stmt.column)
        code = str(source.column("content")[0].as_py())
    return PythonJob(
        code=code,
        conf=conf,
        env=dict(session.python_env),
        input_name=input_name,
        input_table=input_table,
        model_table=_table(session, model, stmt, "model") if model else None,
        num_partitions=session.partitions.get(input_name) if input_name else None,
        output_name=opts.get("outputTable") or stmt.output,
        code_line=stmt.code_line,
    )


def run_ray(session: JobSource, stmt: Run, runtime: Callable[[], Runtime]) -> list[tuple[str, pa.Table]]:
    """Run the job on the Python runtime; return the (name, table) pairs to put in the catalog."""
    job = build_job(session, stmt)
    table = runtime().run(job)  # a PythonCellError is the cell's CellError as it is (its kind tells the user which)
    if table is None and stmt.options.get("autoOutput"):
        return []  # a Python cell without --%output that built no result: its output is what it printed
    if table is None:
        # MLSQL's answer when the code never calls build_result: an empty one-column table.
        table = pa.table({"value": pa.array([], pa.string())})
    names = [n for n in (job.output_name, stmt.output) if n]
    return [(n, table) for n in dict.fromkeys(names)]


def repartition(session: JobSource, stmt: Run) -> tuple[str, Entry, int]:
    """`run t as TableRepartition.`` where partitionNum="N" as t2`: t2 is t, seen as N partitions.

    The table is shared, not copied; the runtime splits it into N data servers when a Python job
    reads t2.
    """
    table = _entry(session, stmt.input, stmt, "input")
    return stmt.output or stmt.input, table, int(stmt.options["partitionNum"])


T = TypeVar("T")


def lookup_ci(tables: Mapping[str, T], name: str) -> T | None:
    """A catalog table by name: exact match first, then case-insensitively (as SQL sees them)."""
    if name in tables:
        return tables[name]
    lowered = name.lower()
    # By key: a catalog's values may be read on access (console/kernel/catalog.py).
    key = next((k for k in tables if k.lower() == lowered), None)
    return None if key is None else tables[key]
