"""The session as the statement handlers see it: the seam between session.py and the rooms it calls.

Commands (`!show`, `!if` …), extensions (`run t as DataSummary`), machine learning
(train/predict/register), the Ray model UDFs and the kernel's queries (result pages,
completion) are handlers called by console.kernel.session.Session. They are typed against
`SessionHost` rather than importing the session, so the calls go one way only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Protocol

import pyarrow as pa

from console.config import Config
from console.kernel.catalog import Catalog, Entry
from console.kernel.manifest import Recorder
from console.protocols import Emit, NotebookLoader

if TYPE_CHECKING:
    from console import lang
    from console.kernel.envs import NotebookEnv
    from console.kernel.provenance import Derivation
    from console.kernel.python_runtime import PythonRuntime
    from console.kernel.results import ResultCache
    from console.kernel.sql import SqlEngine
    from console.sources import SourceContext


@dataclass
class CellRun:
    """What one cell run has done so far: its last table (the cell's result) and the names it set."""
    last: tuple[str, Entry] | None = None
    changed: list[str] = field(default_factory=list)
    io: Recorder = field(default_factory=Recorder)  # what its loads read and saves wrote (the run's manifest)
    run_id: str = ""  # the server's id of this run ("" headless): a model's lineage names it
    reads: list[str] = field(default_factory=list)  # catalog names the running statement reads
    trains: bool = False  # the running statement's output is a model it trained

    def show(self, name: str, table: pa.Table) -> None:
        """Make `table` the cell's result without putting it in the catalog (!show, !desc, …)."""
        self.last = (name, table)


class FlowState(Protocol):
    """The open !if blocks of the running cell (console.kernel.commands.Flow)."""

    def skips(self, stmt: lang.Statement) -> bool: ...

    def unclosed(self) -> int | None: ...


class SessionHost(Protocol):
    """What a statement handler may use of its session."""

    cfg: Config
    emit: Emit
    session_id: str
    notebook_loader: NotebookLoader | None
    tables: Catalog
    variables: dict[str, str]
    params: dict[str, None]  # names `set … where type="defaultParam"` declared
    outside: dict[str, str | None]  # variables whose value came from outside the notebook (setvars.py)
    conf: dict[str, str]
    python_conf: dict[str, str]
    python_env: dict[str, str]
    connections: dict[str, dict[str, str]]
    partitions: dict[str, int]
    derived: dict[str, Derivation]  # table (lower case) → the loads it came from (provenance.py)
    results: ResultCache
    last_command: str

    @property
    def flow(self) -> FlowState: ...

    @property
    def sql(self) -> SqlEngine: ...

    @property
    def cache_dir(self) -> Path: ...

    def lookup(self, name: str) -> pa.Table | None: ...

    def require(self, name: str, stmt: lang.Statement) -> pa.Table:
        """The catalog table `name`, or a CellError at the statement naming the tables there are."""
        ...

    def put(self, name: str, table: Entry, run: CellRun) -> None:
        """Set a catalog table and make it the cell's result."""
        ...

    def source_context(self) -> SourceContext: ...

    def python_runtime(self) -> PythonRuntime: ...

    def notebook_env(self) -> NotebookEnv:
        """The notebook's Python environment (its requirements and their layer, console/kernel/envs.py)."""
        ...

    def refresh_environment(self) -> None:
        """Point the Python runtime at the environment's current layer (its next cell's worker starts in it)."""
        ...

    def run_statements(self, text: str, run: CellRun, cell: Any = None) -> None:
        """Parse and run MLSQL text in this session (macros, !pyInclude …), errors raised as they come."""
        ...

    def variables_view(self) -> Mapping[str, str]:
        """The user's variables over the built-ins (today, …), as ${…} sees them."""
        ...
