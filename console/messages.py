"""The wire vocabulary: typed commands (browser -> kernel) and events (kernel -> browser).

Every message is a frozen dataclass with a `type` tag. `to_wire` turns one into the JSON dict
sent over Socket.IO (and through the kernel pipe); `from_wire` turns it back. docs/protocol.md
lists every message here, and tests/test_protocol_docs.py keeps the two in step.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from console.ids import CellId, NotebookId, RunId, UserId

KernelState = Literal["starting", "idle", "busy", "dead"]
CellState = Literal["queued", "running", "done", "error", "interrupted", "cancelled"]

_REGISTRY: dict[str, type["Message"]] = {}


@dataclass(frozen=True)
class Message:
    type: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.type:
            _REGISTRY[cls.type] = cls

    def to_wire(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["type"] = self.type
        return data


def from_wire(data: dict[str, Any]) -> Message:
    """Build the message named by data['type']; unknown types or fields raise ValueError."""
    kind = data.get("type")
    cls = _REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown message type {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    extra = set(data) - names - {"type"}
    if extra:
        raise ValueError(f"{kind}: unknown fields {sorted(extra)}")
    try:
        return cls(**{k: v for k, v in data.items() if k != "type"})
    except TypeError as exc:
        raise ValueError(f"{kind}: {exc}") from exc


def message_types() -> dict[str, type[Message]]:
    return dict(_REGISTRY)


# ---------------------------------------------------------------- output inside a run
# These are what the engine and the Python runtime produce while a cell runs; the session layer
# stamps them with notebook, run and sequence numbers before they go on the wire.


@dataclass(frozen=True)
class OutputEvent(Message):
    """A batch of output text from one source of one cell run.

    source: "driver" or the Ray actor that printed it, e.g. "Network pid=1234".
    stream: "stdout" | "stderr" | "system".
    seq: per-run sequence number, 1-based, no gaps; a reconnecting client asks for seq > last.
    """

    type: ClassVar[str] = "output"
    text: str
    source: str = "driver"
    stream: str = "stdout"
    notebook_id: NotebookId = NotebookId("")
    cell_id: CellId = CellId("")
    run_id: RunId = RunId("")
    seq: int = 0


@dataclass(frozen=True)
class MetricsEvent(Message):
    """One point of a run's metrics series: values such as loss/accuracy at a step.

    source: the worker that reported it; step: epoch or batch number, as reported.
    """

    type: ClassVar[str] = "metrics"
    values: dict[str, float]
    source: str = "driver"
    step: int | None = None
    notebook_id: NotebookId = NotebookId("")
    cell_id: CellId = CellId("")
    run_id: RunId = RunId("")
    seq: int = 0
    ts: float = 0.0


@dataclass(frozen=True)
class ResultEvent(Message):
    """A cell's result table: the first rows, the total row count and the column types.

    columns: [{"name": str, "type": str}]; rows: list of lists of JSON-safe values.
    """

    type: ClassVar[str] = "result"
    name: str
    columns: list[dict[str, str]]
    rows: list[list[Any]]
    total_rows: int
    notebook_id: NotebookId = NotebookId("")
    cell_id: CellId = CellId("")
    run_id: RunId = RunId("")


@dataclass(frozen=True)
class ErrorEvent(Message):
    """Why a cell run failed, as much as its user may see.

    kind: "parse" | "sql" | "python" | "data" | "worker" | "env" | "schema" | "kernel" | "interrupted".
    line/column: 1-based, within the cell; traceback: the user's part only (a Python cell's own
    frames, a parse error's snippet), never the server's. kind "kernel" is the kernel dying under
    the run, or a fault of ours: then message is "internal error <id>; see the server log" and the
    traceback is only in that log, under the id (console/kernel/errors.py).
    """

    type: ClassVar[str] = "error"
    kind: str
    message: str
    line: int | None = None
    column: int | None = None
    traceback: str = ""
    notebook_id: NotebookId = NotebookId("")
    cell_id: CellId = CellId("")
    run_id: RunId = RunId("")


@dataclass(frozen=True)
class CellStatusEvent(Message):
    """A cell run changed state; elapsed_ms is set when it ends."""

    type: ClassVar[str] = "cell_status"
    notebook_id: NotebookId
    cell_id: CellId
    run_id: RunId
    status: CellState
    elapsed_ms: int | None = None


@dataclass(frozen=True)
class KernelStatusEvent(Message):
    """The notebook's kernel changed state; reason explains a dead kernel (exit code, signal, OOM).

    user_id: whose kernel it is; each (user, notebook) has its own kernel, all in one room.
    """

    type: ClassVar[str] = "kernel_status"
    notebook_id: NotebookId
    status: KernelState
    reason: str = ""
    user_id: UserId | None = None


@dataclass(frozen=True)
class OutputHiddenEvent(Message):
    """Stands in for output chunks first_seq..last_seq of a run that are not sent inline.

    Big outputs keep their head and tail inline; the middle is this marker, with the size hidden
    and where the full log is (GET log_url).
    """

    type: ClassVar[str] = "output_hidden"
    notebook_id: NotebookId
    cell_id: CellId
    run_id: RunId
    first_seq: int
    last_seq: int
    hidden_bytes: int
    log_url: str = ""


# ---------------------------------------------------------------- commands from the browser


@dataclass(frozen=True)
class JoinCommand(Message):
    """Join a notebook's room; the server replays stored output after `since` (run_id -> last seq).

    metrics_since: the same for metrics points (their seq is counted apart from output's).
    """

    type: ClassVar[str] = "join"
    notebook_id: NotebookId
    since: dict[str, int] = field(default_factory=dict)
    metrics_since: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class LeaveCommand(Message):
    """Leave a notebook's room (the page shows another notebook)."""

    type: ClassVar[str] = "leave"
    notebook_id: NotebookId


@dataclass(frozen=True)
class RunCellCommand(Message):
    """Run one cell (its stored source)."""

    type: ClassVar[str] = "run_cell"
    notebook_id: NotebookId
    cell_id: CellId


@dataclass(frozen=True)
class RunAllCommand(Message):
    """Run every cell of the notebook in order."""

    type: ClassVar[str] = "run_all"
    notebook_id: NotebookId


@dataclass(frozen=True)
class RunFromCommand(Message):
    """Run the given cell and every cell after it."""

    type: ClassVar[str] = "run_from"
    notebook_id: NotebookId
    cell_id: CellId


@dataclass(frozen=True)
class InterruptCommand(Message):
    """Interrupt the running cell and cancel the queued ones."""

    type: ClassVar[str] = "interrupt"
    notebook_id: NotebookId


@dataclass(frozen=True)
class RestartCommand(Message):
    """Stop the kernel (its tables go) and start a fresh one."""

    type: ClassVar[str] = "restart"
    notebook_id: NotebookId


# ---------------------------------------------------------------- between the server and a kernel process only


@dataclass(frozen=True)
class ExecuteCommand(Message):
    """Run source in the kernel as run run_id (sent by the session layer; never by a browser)."""

    type: ClassVar[str] = "execute"
    notebook_id: NotebookId
    cell_id: CellId
    run_id: RunId
    source: str
    kind: str = "mlsql"


@dataclass(frozen=True)
class KernelLogEvent(Message):
    """A record of the kernel's own log (kernel -> server), written to the server's log, never shown.

    level: a logging level number; text: the formatted record, traceback included.
    """

    type: ClassVar[str] = "kernel_log"
    level: int
    text: str


@dataclass(frozen=True)
class NotebookRequest(Message):
    """The kernel asks for a notebook's cells by name, for `include notebook.`name`` (kernel -> server).

    The server reads its store and answers with notebook_cells; the kernel never opens the database.
    """

    type: ClassVar[str] = "notebook_request"
    request_id: str
    name: str


@dataclass(frozen=True)
class NotebookCells(Message):
    """The answer to a notebook_request (server -> kernel): cells as [kind, source] pairs, or the error."""

    type: ClassVar[str] = "notebook_cells"
    request_id: str
    cells: list[list[str]] = field(default_factory=list)
    error: str = ""
