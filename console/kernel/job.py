"""What the engine hands the Python runtime: one Python job, and the error it may raise."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from console.kernel.errors import CellError

if TYPE_CHECKING:  # pyarrow stays a lazy import for the web tier
    import pyarrow as pa

    from console.kernel.catalog import Entry


@dataclass
class PythonJob:
    """One run of Python code, as a `run t as Ray.`` where code='''…'''` statement describes it.

    conf: the session's `!python conf` values merged with the statement's options (schema,
          dataMode, runIn, pythonExec, rayAddress, any user key); visible as context.conf.
    env: the session's `!python env` values; PYTHON_ENV is a shell prefix run before the worker.
    input_name/input_table: the input table (None for `run command as Ray`).
    model_table: the table named by `model=` / `--%model=` (context.conf["modelServers"]).
    num_partitions: set by `run t as TableRepartition`; None = suit the cluster's CPUs.
    code_line: the cell line where `code` starts, so tracebacks name lines of the cell.
    """

    code: str
    conf: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    input_name: str | None = None
    input_table: "Entry | None" = None  # a loaded table may still be on disk (catalog.LazyTable)
    model_table: "pa.Table | None" = None
    num_partitions: int | None = None
    output_name: str | None = None
    code_line: int = 1


class PythonCellError(CellError):
    """A user-visible failure of a Python job: the cell raised, the worker died, the env failed.

    The cell's one user error (CellError), with a column never known: kind "python" (the code
    raised), "worker" (the process died: exit code / signal / OOM), "env" (PYTHON_ENV failed),
    "schema" (build_result rows do not match the schema), "interrupted".
    """

    def __init__(self, kind: str, message: str, line: int | None = None, traceback: str = "") -> None:
        super().__init__(kind, message, line, None, traceback)
