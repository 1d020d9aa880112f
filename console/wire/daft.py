"""The kernel <-> Daft driver vocabulary: SQL on the cluster (console/kernel/sqlengines/cluster.py).

The driver is a child process of the kernel (`python -m console.kernel.sqlengines.cluster_driver`)
on the session's Ray cluster; one Channel over its stdin/stdout carries these messages. The kernel
started it with what it sends, so the driver reads on the trusted line cap; the kernel reads the
driver's answers on the ordinary 1 MiB cap (a long file list comes as parts), decoded by type.

Inputs travel by name: a table is a list of parquet files (grouped by their partition values for
a partitioned table) or an Arrow IPC file in the session's cache; the rows never cross this pipe.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from console.wire.codec import Max, Message, Vocabulary, cap

TO_DRIVER = Vocabulary("kernel->daft driver")
FROM_DRIVER = Vocabulary("daft driver->kernel")

_Path = Annotated[str, Max(4096)]
_FILES = cap(1_000_000)  # a big partitioned table has many files; the channel's message cap still holds


@dataclass(frozen=True)
class FileGroup:
    """One partition of a partitioned input: its files and the values of its partition columns."""

    values: dict[str, Any]
    files: list[_Path] = field(default_factory=list, metadata=_FILES)


@dataclass(frozen=True)
class TableInput:
    """One input table of a statement, exactly one of: `files` (parquet, read by Daft's workers),
    `groups` with `columns` and `types` (arrow type names; the values become columns), or `ipc`
    (an Arrow IPC file the kernel wrote)."""

    files: list[_Path] | None = field(default=None, metadata=_FILES)
    groups: list[FileGroup] | None = None
    columns: list[str] | None = None
    types: dict[str, str] | None = None
    ipc: _Path | None = None

    def spec(self) -> dict[str, Any]:
        """The form daft_run.answer() reads: only the keys this input has."""
        out: dict[str, Any] = {}
        if self.files is not None:
            out["files"] = list(self.files)
        if self.groups is not None:
            out.update(groups=[{"values": g.values, "files": list(g.files)} for g in self.groups],
                       columns=list(self.columns or []), types=dict(self.types or {}))
        if self.ipc is not None:
            out["ipc"] = self.ipc
        return out


@TO_DRIVER.register
@dataclass(frozen=True)
class DriverConnect(Message):
    """Connect to the session's Ray cluster at `address` (ray.init, then Daft's Ray runner, once)."""

    type: ClassVar[str] = "daft_connect"
    request_id: Annotated[str, Max(64)]
    address: Annotated[str, Max(512)]


@TO_DRIVER.register
@dataclass(frozen=True)
class DriverQuery(Message):
    """Run one translated select; Daft's workers write its result as parquet into `out_dir`.

    functions: what DuckDB computes inside Daft (daft_udf.py); values: the statement's VALUES as
    DuckDB SQL; delta: timestamps in microseconds; partition_by: hive folders per value;
    needs_cpu: a sort, which waits a little for a free CPU rather than hang (cluster_driver.py).
    """

    type: ClassVar[str] = "daft_query"
    request_id: Annotated[str, Max(64)]
    sql: str
    tables: dict[str, TableInput]
    out_dir: _Path
    needs_cpu: bool = False
    delta: bool = False
    partition_by: list[str] = field(default_factory=list)
    functions: dict[str, Any] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)

    def request(self) -> dict[str, Any]:
        """The statement as daft_run.answer() takes it (the parity harness calls that directly)."""
        return {"sql": self.sql, "tables": {name: t.spec() for name, t in self.tables.items()},
                "out_dir": self.out_dir, "needs_cpu": self.needs_cpu, "delta": self.delta,
                "partition_by": list(self.partition_by), "functions": dict(self.functions),
                "values": dict(self.values)}


@FROM_DRIVER.register
@dataclass(frozen=True)
class DriverAnswer(Message):
    """The answer to `daft_connect` (`nodes`) or `daft_query` (`files` in the result's row order,
    each one's `partitions` values as text), or `error`; `cannot_run` when Daft refused or failed
    the statement (said as what the cluster cannot run, with the setting that runs it locally).
    `worker_nodes`, `daft_actors`: where the statement's Daft workers ran, for tests and logs."""

    type: ClassVar[str] = "daft_answer"
    request_id: Annotated[str, Max(64)]
    error: str = ""
    cannot_run: bool = False
    nodes: int = 0
    files: list[_Path] = field(default_factory=list, metadata=_FILES)
    partitions: list[dict[str, str | None]] = field(default_factory=list, metadata=_FILES)
    worker_nodes: list[Annotated[str, Max(128)]] = field(default_factory=list)
    daft_actors: dict[str, int] = field(default_factory=dict)


__all__ = ["DriverAnswer", "DriverConnect", "DriverQuery", "FROM_DRIVER", "FileGroup", "TO_DRIVER", "TableInput"]
