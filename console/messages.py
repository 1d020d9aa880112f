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
    stream: "stdout" | "stderr" | "system" | "image" (text is then one base64 PNG, from
    Utils.show_plt or display(fig); stored and replayed like text, shown as a picture).
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


# Live co-editing (console/server/coedit.py): the notebook as a shared Yjs document (root Array
# "cells" of Map {id, kind, source: Text}); updates, state vectors and awareness are base64 strings.


@dataclass(frozen=True)
class DocSyncCommand(Message):
    """Ask for the shared document: the ack holds what the page lacks after `state_vector` ("" =
    everything), the server's state vector and the doc's epoch; an `epoch` other than the server's
    means the page holds a document from before a reload of the server's and must rebuild."""

    type: ClassVar[str] = "doc_sync"
    notebook_id: NotebookId
    state_vector: str = ""
    epoch: str = ""


@dataclass(frozen=True)
class DocUpdateCommand(Message):
    """A Yjs update made on the page, for the doc of `epoch`; relayed to the room as doc_changed."""

    type: ClassVar[str] = "doc_update"
    notebook_id: NotebookId
    update: str = ""
    epoch: str = ""


@dataclass(frozen=True)
class AwarenessCommand(Message):
    """Presence (y-protocols awareness update: name, colour, cell, cursor) of the page's `client_id`."""

    type: ClassVar[str] = "awareness"
    notebook_id: NotebookId
    update: str = ""
    client_id: int = 0


@dataclass(frozen=True)
class DocChangedEvent(Message):
    """Someone else's update to the shared document."""

    type: ClassVar[str] = "doc_changed"
    notebook_id: NotebookId
    update: str
    epoch: str


@dataclass(frozen=True)
class DocSavedEvent(Message):
    """The shared document (or a REST edit) was stored as `revision`; `state_vector`: what it held."""

    type: ClassVar[str] = "doc_saved"
    notebook_id: NotebookId
    revision: int
    state_vector: str = ""


@dataclass(frozen=True)
class PresenceEvent(Message):
    """Someone's awareness update, or `left`: the awareness client ids of pages that went away."""

    type: ClassVar[str] = "presence"
    notebook_id: NotebookId
    update: str = ""
    left: list[int] = field(default_factory=list)


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


@dataclass(frozen=True)
class KernelQuery(Message):
    """The server asks the kernel about its session (server -> kernel), answered by kernel_answer.

    what: a row of console/kernel/queries.py HANDLERS: "result_page" (args: cell, offset, limit,
    sort), "result_file" (args: cell, format, name, sort), "complete" (args: source, cursor,
    kind), "inspect" (args: name). Answered on the
    kernel's command thread, so a query does not wait for a running cell.
    """

    type: ClassVar[str] = "kernel_query"
    request_id: str
    what: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelAnswer(Message):
    """The answer to a kernel_query (kernel -> server): data, or error (a message the asker may see)."""

    type: ClassVar[str] = "kernel_answer"
    request_id: str
    data: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    bad_request: bool = False  # the error is about the question (a ValueError), not a missing answer


# ---------------------------------------------------------------- kernel <-> worker pipe
# The kernel's PythonRuntime (console/kernel/) and its cell worker (console/worker/) talk over a
# socket pair. These messages travel pickled as the dataclasses themselves (multiprocessing's
# Connection), not as to_wire dicts: both ends import this same console package (the kernel puts
# it first on the worker's PYTHONPATH whatever PYTHON_ENV activates), the pipe stays on one
# machine between two processes of one kernel, and the receiver gets typed objects, nested
# CellError included, with no decoding step. The socket policy table has no row for them, so a
# browser cannot send one.

FD_MARK = b"\x00console-fd-mark "  # + job_id + "\n": see CellDone.marked


def fd_mark(job_id: str) -> bytes:
    """The line the worker writes on its fd 1 and 2 before CellDone (shorter than PIPE_BUF: atomic)."""
    return FD_MARK + job_id.encode() + b"\n"


@dataclass(frozen=True)
class CellError:
    """Why a Python cell failed, as the user should see it (part of CellDone, not a message).

    kind: "python" | "schema" | "interrupted"; line: the cell line; traceback: our frames left out.
    """

    kind: str
    message: str
    line: int | None = None
    traceback: str = ""


@dataclass(frozen=True)
class WorkerReady(Message):
    """The worker has started (PYTHON_ENV worked) and waits for jobs."""

    type: ClassVar[str] = "worker_ready"
    pid: int
    python_version: str


@dataclass(frozen=True)
class RunJob(Message):
    """Run one Python cell. Tables travel as Arrow IPC files named by path (input, model, output).

    conf: the cell's context.conf; actor_env: env vars of the cell's actors; ship_modules: send
    pyjava/ and console/ with the actors (an external cluster); num_partitions: None = the
    cluster's CPUs, or default_partitions without Ray.
    """

    type: ClassVar[str] = "run_job"
    job_id: str
    code: str
    code_line: int
    conf: dict[str, str]
    output_path: str
    actor_env: dict[str, str]
    ship_modules: bool
    default_partitions: int
    num_partitions: int | None = None
    input_path: str | None = None
    model_path: str | None = None


@dataclass(frozen=True)
class CellOutput(Message):
    """Text the cell printed (Python-level sys.stdout/stderr, actors' forwarded lines included)."""

    type: ClassVar[str] = "cell_output"
    job_id: str
    text: str
    source: str
    stream: str


@dataclass(frozen=True)
class CellMetrics(Message):
    """A metrics point the cell reported (log_metrics, or a Keras epoch line)."""

    type: ClassVar[str] = "cell_metrics"
    job_id: str
    values: dict[str, float]
    source: str
    step: int | None = None


@dataclass(frozen=True)
class NeedCluster(Message):
    """The cell uses Ray: the kernel answers ClusterInfo (starting its head if needed) or ClusterUnavailable."""

    type: ClassVar[str] = "need_cluster"
    job_id: str


@dataclass(frozen=True)
class ClusterInfo(Message):
    """The notebook's Ray cluster (RayCluster.to_json(): address, client_address, …)."""

    type: ClassVar[str] = "cluster_info"
    info: dict[str, Any]


@dataclass(frozen=True)
class ClusterUnavailable(Message):
    """The cluster could not be started; the cell sees it as its own error."""

    type: ClassVar[str] = "cluster_unavailable"
    message: str


@dataclass(frozen=True)
class CellDone(Message):
    """The cell ended: result_path holds its output table (or None), error why it failed (or None).

    marked: the streams ("stdout", "stderr") whose fd carried fd_mark(job_id) just before this
    message: the kernel reads each of them up to the mark, so fd-level output the cell wrote
    (C libraries, subprocesses) is in the cell's output before it ends.
    """

    type: ClassVar[str] = "cell_done"
    job_id: str
    result_path: str | None
    error: CellError | None
    marked: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkerExit(Message):
    """Finish: end the cell's Ray job and exit."""

    type: ClassVar[str] = "worker_exit"


@dataclass(frozen=True)
class UdfCall(Message):
    """Run a model function's code in the kernel's model-function worker (`register Ray`).

    phase "register": job.code is the registerCode, job.model_path the model's file table; it
    calls UDFBuilder.build, which starts the function's actors. phase "predict": job.code is the
    predictCode, job.input_path one batch of the SQL function's arguments (column `value`).
    Unlike RunJob, the worker's Ray job stays up afterwards, so the actors live on. Answered by
    CellDone, whose result_path holds the output table.
    """

    type: ClassVar[str] = "udf_call"
    job: RunJob
    function: str
    phase: str


@dataclass(frozen=True)
class WorkerComplete(Message):
    """Between cells: Python completion at line (1-based) / column (0-based) over the session's globals."""

    type: ClassVar[str] = "worker_complete"
    request_id: str
    source: str
    line: int
    column: int


@dataclass(frozen=True)
class WorkerCompletion(Message):
    """The answer to WorkerComplete: items {"label", "type", "detail"} from jedi.Interpreter."""

    type: ClassVar[str] = "worker_completion"
    request_id: str
    items: list[dict[str, str]]
