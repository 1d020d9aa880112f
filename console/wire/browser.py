"""The browser <-> server vocabulary: the socket commands a page sends and the events it gets.

The browser emits `command` with a command's to_wire() dict; `decode_command` turns it into the
command's dataclass or refuses it (`DecodeError`, answered as a 400/413 ack) before any handler
runs: an unknown type, an unknown or missing field, a field of the wrong type or past its size.
The events go to a notebook's room as to_wire() dicts. docs/protocol.md lists every message here,
and tests/test_protocol_docs.py keeps the two in step.

Only the server makes events, so their fields are typed for the reader, not checked on the way in.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from console.ids import CellId, NotebookId, RunId, UserId
from console.wire.codec import DecodeError, Max, Message, Range, Vocabulary
from console.wire.worker import RayUsage

__all__ = ["COMMANDS", "DecodeError", "decode_command"]

KernelState = Literal["starting", "idle", "busy", "dead"]
CellState = Literal["queued", "running", "done", "error", "interrupted", "cancelled"]

ID_CHARS = 64                # the store's notebook, cell and run ids are 32 characters at most
SINCE_RUNS = 10_000          # runs a page can have seen: one per cell
UPDATE_CHARS = 1 << 26       # base64 of a document update; console/server/live/coedit.py caps the document itself
AWARENESS_CHARS = 64 * 1024  # a name, a colour, a cell and a cursor: far less

NotebookRef = Annotated[NotebookId, Max(ID_CHARS)]
CellRef = Annotated[CellId, Max(ID_CHARS)]
SeqMap = Annotated[dict[Annotated[str, Max(ID_CHARS)], int], Max(SINCE_RUNS)]  # run id -> seq
Epoch = Annotated[str, Max(ID_CHARS)]
# cell id -> the FNV-1a digest of its source as the page shows it (console/server/live/coedit.py source_digest)
Sources = Annotated[dict[Annotated[str, Max(ID_CHARS)], Annotated[str, Max(8)]], Max(SINCE_RUNS)]

# parameter name -> the value the page's parameter form holds (console/lang/params.py); empty: as written
PARAM_CHARS = 4096
Params = Annotated[dict[Annotated[str, Max(ID_CHARS)], Annotated[str, Max(PARAM_CHARS)]], Max(100)]

COMMANDS = Vocabulary("browser command")


def decode_command(data: Any) -> Message:
    """The command `data` names, every field checked; DecodeError says what is wrong."""
    return COMMANDS.decode(data)


# ---------------------------------------------------------------- commands (browser -> server)


@COMMANDS.register
@dataclass(frozen=True)
class JoinCommand(Message):
    """Join a notebook's room; the server replays stored output after `since` (run_id -> last seq).

    metrics_since: the same for metrics points (their seq is counted apart from output's).
    """

    type: ClassVar[str] = "join"
    notebook_id: NotebookRef
    since: SeqMap = field(default_factory=dict)
    metrics_since: SeqMap = field(default_factory=dict)


@COMMANDS.register
@dataclass(frozen=True)
class WatchJobsCommand(Message):
    """The Jobs page: send this socket `jobs_changed` for every job it may see, from now until it
    disconnects (console/server/live/jobwatch.py checks the notebook's access at each event)."""

    type: ClassVar[str] = "watch_jobs"


@COMMANDS.register
@dataclass(frozen=True)
class LeaveCommand(Message):
    """Leave a notebook's room (the page shows another notebook)."""

    type: ClassVar[str] = "leave"
    notebook_id: NotebookRef


@COMMANDS.register
@dataclass(frozen=True)
class RunCellCommand(Message):
    """Run one cell (its stored source). `sources`: what the page shows of the cells it runs; the
    server runs only once the store holds that (a 409 with `stale` after a few seconds). `params`:
    the parameter form's values, run in place of the declared defaults (none: the source as written)."""

    type: ClassVar[str] = "run_cell"
    notebook_id: NotebookRef
    cell_id: CellRef
    sources: Sources = field(default_factory=dict)
    params: Params = field(default_factory=dict)


@COMMANDS.register
@dataclass(frozen=True)
class RunAllCommand(Message):
    """Run every cell of the notebook in order (`sources`, `params`: as run_cell's)."""

    type: ClassVar[str] = "run_all"
    notebook_id: NotebookRef
    sources: Sources = field(default_factory=dict)
    params: Params = field(default_factory=dict)


@COMMANDS.register
@dataclass(frozen=True)
class RunFromCommand(Message):
    """Run the given cell and every cell after it (`sources`, `params`: as run_cell's)."""

    type: ClassVar[str] = "run_from"
    notebook_id: NotebookRef
    cell_id: CellRef
    sources: Sources = field(default_factory=dict)
    params: Params = field(default_factory=dict)


@COMMANDS.register
@dataclass(frozen=True)
class InterruptCommand(Message):
    """Interrupt the running cell and cancel the queued ones."""

    type: ClassVar[str] = "interrupt"
    notebook_id: NotebookRef


@COMMANDS.register
@dataclass(frozen=True)
class RestartCommand(Message):
    """Stop the kernel (its tables go) and start a fresh one."""

    type: ClassVar[str] = "restart"
    notebook_id: NotebookRef


# Live co-editing (console/server/live/coedit.py): the notebook as a shared Yjs document (root Array
# "cells" of Map {id, kind, source: Text}); updates, state vectors and awareness are base64 strings.


@COMMANDS.register
@dataclass(frozen=True)
class DocSyncCommand(Message):
    """Ask for the shared document: the ack holds what the page lacks after `state_vector` ("" =
    everything), the server's state vector and the doc's epoch; an `epoch` other than the server's
    means the page holds a document from before a reload of the server's and must rebuild."""

    type: ClassVar[str] = "doc_sync"
    notebook_id: NotebookRef
    state_vector: str = ""
    epoch: Epoch = ""


@COMMANDS.register
@dataclass(frozen=True)
class DocUpdateCommand(Message):
    """A Yjs update made on the page, for the doc of `epoch`; relayed to the room as doc_changed."""

    type: ClassVar[str] = "doc_update"
    notebook_id: NotebookRef
    update: Annotated[str, Max(UPDATE_CHARS)] = ""
    epoch: Epoch = ""


@COMMANDS.register
@dataclass(frozen=True)
class AwarenessCommand(Message):
    """Presence (y-protocols awareness update: colour, cell, cursor) of the page's `client_id`.

    Only for a notebook whose room the socket joined, and only the page's own client id; the
    server replaces the state's `user` name and id with the sender's account before relaying it.
    """

    type: ClassVar[str] = "awareness"
    notebook_id: NotebookRef
    update: Annotated[str, Max(AWARENESS_CHARS)] = ""
    client_id: Annotated[int, Range(0, 2**53 - 1)] = 0  # a Yjs client id: a JavaScript safe integer


# ---------------------------------------------------------------- events (server -> browser)
# Output inside a run is what the engine and the Python runtime produce; the server stamps it
# with its own notebook, cell and run ids and sequence numbers before it reaches a page.


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

    kind: "parse" | "sql" | "python" | "data" | "worker" | "env" | "schema" | "kernel" | "interrupted" |
    "not_run" (a cancelled cell of a Run all that stopped at a failure above it).
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
    """A cell run changed state; elapsed_ms is set when it ends.

    user_id, run_by: who ran it (the notebook's session is shared: any runner's cell runs in it);
    job_id, job_name: the job whose run made it, when a job did (the page says "run by job …").
    """

    type: ClassVar[str] = "cell_status"
    notebook_id: NotebookId
    cell_id: CellId
    run_id: RunId
    status: CellState
    elapsed_ms: int | None = None
    user_id: UserId | None = None
    run_by: str = ""
    job_id: str = ""
    job_name: Annotated[str, Max(255)] = ""


@dataclass(frozen=True)
class KernelStatusEvent(Message):
    """The notebook's kernel changed state; reason explains a dead kernel (exit code, signal, OOM).

    user_id: None for the notebook's one shared session (every runner's cells run in it).
    action, by: "restart" | "interrupt" | "shutdown" and the name of who did it, told to everyone
    on the page ("" when the kernel changed state by itself).
    """

    type: ClassVar[str] = "kernel_status"
    notebook_id: NotebookId
    status: KernelState
    reason: str = ""
    user_id: UserId | None = None
    action: str = ""
    by: str = ""


@dataclass(frozen=True)
class RayUsageEvent(Message):
    """A running cell's Ray actors, tasks and CPUs (console/wire/worker.py RayUsage), live; not stored.

    at: the server's clock when it arrived (the last report comes just before the cell ends).
    """

    type: ClassVar[str] = "ray_usage"
    notebook_id: NotebookId
    cell_id: CellId
    run_id: RunId
    usage: RayUsage
    at: float = 0.0


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


@dataclass(frozen=True)
class DocChangedEvent(Message):
    """Someone else's update to the shared document."""

    type: ClassVar[str] = "doc_changed"
    notebook_id: NotebookId
    update: str
    epoch: str


@dataclass(frozen=True)
class DocSavedEvent(Message):
    """The shared document (or a REST edit) was stored as `revision`; `state_vector` and `deleted`
    (an update holding only its delete set) say what it held, so a page can tell whether every
    change it made, deletions included, is stored."""

    type: ClassVar[str] = "doc_saved"
    notebook_id: NotebookId
    revision: int
    state_vector: str = ""
    deleted: str = ""


@dataclass(frozen=True)
class PresenceEvent(Message):
    """Someone's awareness update (its `user` stamped by the server), or `left`: the awareness
    client ids of pages that went away."""

    type: ClassVar[str] = "presence"
    notebook_id: NotebookId
    update: str = ""
    left: list[int] = field(default_factory=list)


CommentAction = Literal["created", "edited", "resolved", "reopened", "deleted"]


@dataclass(frozen=True)
class CommentsChangedEvent(Message):
    """A comment on one of the notebook's cells was made, edited, resolved, reopened or deleted
    (console/server/api/comments.py). It carries no text: a page reads the notebook's comments
    again over REST. by: the name of who did it."""

    type: ClassVar[str] = "comments_changed"
    notebook_id: NotebookId
    cell_id: CellId
    comment_id: str
    action: CommentAction
    by: str = ""


JobChange = Literal["created", "edited", "deleted", "run"]


@dataclass(frozen=True)
class JobsChangedEvent(Message):
    """A job was created, edited or deleted, or one of its runs was queued, started or ended
    (console/server/jobs/). Sent only to sockets that sent `watch_jobs` and whose user may view the
    job's notebook now; it carries no status or output: the Jobs page reads GET /api/jobs again."""

    type: ClassVar[str] = "jobs_changed"
    notebook_id: NotebookId
    job_id: str
    change: JobChange


EVENTS: tuple[type[Message], ...] = (
    OutputEvent, MetricsEvent, ResultEvent, ErrorEvent, CellStatusEvent, KernelStatusEvent, OutputHiddenEvent,
    DocChangedEvent, DocSavedEvent, PresenceEvent, RayUsageEvent, CommentsChangedEvent, JobsChangedEvent)
