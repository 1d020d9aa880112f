"""The typed seams between rooms: what each side may call of the other (runs everywhere).

- `Engine`: what the kernel process (console/kernel/main.py) calls of its engine;
  console.kernel.session.Session is the real one, tests inject a scripted one.
- `RunStore`: what the server's kernels, output batcher and stored-run view use of the store
  (console.store.Store).
- `KernelManager`: what the HTTP and socket endpoints use of the kernels
  (console.server.sessions.kernels.SessionManager).

Nothing here is imported at run time by the rooms it describes' other side, so no import circle
comes with a seam.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from console.config import Config
from console.ids import CellId, NotebookId, RunId, SessionId, UserId
from console.wire.browser import KernelState
from console.wire.cell import Failure, Result
from console.wire.codec import Message
from console.wire.kernel import ManifestEntry, ReplayInputs

if TYPE_CHECKING:  # records of the store, for the types only
    from console.store import MetricRecord, NotebookInfo, NotebookRecord, OutputRecord, RunRecord, UserRecord

# What an engine emits while a cell runs: Output, Metrics (wire/cell.py) or a message the
# kernel passes on (its worker's CellRayUsage, EnvironmentChanged).
Emit = Callable[[object], None]
# include notebook.`name`: the named notebook's cells as (kind, source) pairs.
NotebookLoader = Callable[[str], list[tuple[str, str]]]


@dataclass
class CellOutcome:
    """What run_cell reports: ok, the result (the cell's last table), the error, the tables it set,
    and what its loads read and saves wrote (the run's manifest)."""

    ok: bool
    result: Result | None = None
    error: Failure | None = None
    tables_changed: list[str] = field(default_factory=list)
    io: list[ManifestEntry] = field(default_factory=list)  # what its statements read and wrote
    io_dropped: int = 0  # entries past the cap of one manifest message
    lock_hash: str = ""  # the lock of the notebook environment its Python ran in ("": the base)


class Engine(Protocol):
    """One session's engine in a kernel process: runs cells one at a time, on one thread.

    run_cell reports user errors in its outcome; anything it raises is a fault of ours, which the
    kernel logs and reports as an internal error. interrupt() is called from another thread.
    """

    def run_cell(self, source: str, kind: str = "mlsql", cell: CellId | int | None = None,
                 run_id: str = "") -> CellOutcome: ...

    def interrupt(self) -> None: ...

    def prepare_cell(self) -> None:
        """Forget an interrupt meant for an earlier cell. The kernel calls it before it says the next
        cell runs, so an interrupt sent once the cell shows running is kept for that cell; run_cell
        calls it itself when nobody did."""
        ...

    def shutdown(self) -> None: ...

    def query(self, what: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a kernel_query; LookupError/ValueError carry a message for the asker."""
        ...


class EngineFactory(Protocol):
    """How the kernel makes its engine: console.kernel.session.Session's constructor, or a test's."""

    def __call__(self, cfg: Config, emit: Emit, *, session_id: SessionId,
                 notebook_loader: NotebookLoader | None, cluster: Any = None) -> Engine: ...


class RunStore(Protocol):
    """The store functions that the kernels (runs, includes), the batcher and the socket replay use."""

    def get_notebook(self, notebook_id: NotebookId) -> NotebookRecord: ...

    def find_notebooks(self, name: str | None = None) -> list[NotebookInfo]: ...

    def get_environment(self, notebook_id: str, revision: int | None = None) -> dict[str, Any]: ...

    def set_environment(self, notebook_id: str, environment: Any) -> dict[str, Any]: ...

    def get_user(self, user_id: int) -> UserRecord: ...  # who ran a cell, named on the page

    def snapshot_notebook(self, notebook_id: NotebookId, author_id: UserId | None = None,
                          label: str | None = None) -> Any: ...

    def create_run(self, notebook_id: NotebookId, cell_id: CellId, source: str,
                   user_id: UserId | None = None) -> RunRecord: ...

    def set_run_status(self, run_id: RunId, status: str) -> RunRecord: ...

    def finish_run(self, run_id: RunId, status: str, error: dict[str, Any] | None = None,
                   result: dict[str, Any] | None = None, manifest: Mapping[str, Any] | None = None) -> RunRecord: ...

    def fail_unfinished_runs(self) -> int: ...

    def append_output(self, run_id: RunId, chunks: Iterable[Any], hidden_bytes: int = 0, *,
                      skipped_bytes: int = 0, drop: tuple[int, int] | None = None) -> int: ...

    # A run's log file (console/outputs/logfile.py), named relative to the data folder.
    def set_log_file(self, run_id: RunId, path: str) -> None: ...

    def log_file_of(self, run_id: RunId) -> str | None: ...

    def unfinished_logs(self) -> list[tuple[RunId, str, int]]: ...

    def iter_outputs(self, run_id: RunId, page: int = 500) -> Iterator[OutputRecord]: ...

    def append_metrics(self, run_id: RunId, points: Iterable[Any]) -> None: ...

    def last_output_seq(self, run_id: RunId) -> int: ...

    def metrics_for(self, run_id: RunId, since: int = 0) -> list[MetricRecord]: ...

    # The reads of the stored-run view (console/outputs/view.py): sizes first, then only the
    # chunks it shows.
    def latest_runs(self, notebook_id: NotebookId, with_outputs: bool = True) -> dict[str, RunRecord]: ...

    def output_sizes(self, run_id: RunId, since: int = 0) -> list[tuple[int, int]]: ...

    def outputs_between(self, run_id: RunId, first: int, last: int) -> list[OutputRecord]: ...


class KernelInfo(Protocol):
    """A (user, notebook) kernel as the endpoints report it."""

    @property
    def user_id(self) -> UserId | None: ...

    @property
    def status(self) -> KernelState: ...

    @property
    def reason(self) -> str: ...


class KernelManager(Protocol):
    """The kernels and their run queues, as the HTTP and socket endpoints drive them."""

    @property
    def cfg(self) -> Config: ...

    def start(self) -> KernelManager: ...

    def shutdown(self) -> None: ...

    def run(self, user_id: UserId | None, notebook_id: NotebookId, mode: str = "cell",
            cell_id: CellId | None = None, *, params: Mapping[str, str] | None = None) -> list[RunId]: ...

    # A job's headless run (console/server/jobs/scheduler.py): cells as given, in a session of its own lane.
    def queue_cells(self, user_id: UserId | None, notebook_id: NotebookId, cells: list[tuple[CellId, str, str]],
                    lane: str = "", batch: str = "", *, params: Mapping[str, str] | None = None,
                    revision: int | None = None, job: tuple[str, str] = ("", ""),
                    replay: ReplayInputs | None = None, replay_of: str = "") -> list[RunId]: ...

    def close(self, user_id: UserId | None, notebook_id: NotebookId, lane: str) -> None: ...

    # An event set when the run's end is stored (or the manager stops), while the block runs.
    def watch_end(self, run_id: RunId) -> AbstractContextManager[threading.Event]: ...

    def interrupt(self, user_id: UserId | None, notebook_id: NotebookId, lane: str = "") -> dict[str, Any]: ...

    def restart(self, user_id: UserId | None, notebook_id: NotebookId) -> None: ...

    def sessions_of(self, notebook_id: NotebookId) -> Sequence[KernelInfo]: ...

    def locks(self, notebook_id: NotebookId) -> threading.RLock: ...

    def replay(self, notebook_id: NotebookId, since: dict[str, int],
               metrics_since: dict[str, int]) -> list[Message]: ...

    def query(self, user_id: UserId | None, notebook_id: NotebookId, what: str, args: dict[str, Any],
              timeout: float = 30.0) -> dict[str, Any]:
        """Ask the user's kernel of the notebook (see messages.KernelQuery).

        Raises LookupError when that kernel is not running or has no answer, ValueError for a
        bad question, TimeoutError when it does not answer in time.
        """
        ...
