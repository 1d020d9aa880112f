"""The server <-> kernel vocabulary: the two pipes between the web process and one kernel process.

The kernel runs a member's code, so everything it writes is untrusted input: it speaks only
about the run the server told it to execute, by that run's id, and never names a notebook or a
cell; the server accepts what concerns the kernel's current run and stamps it with its own
ids (console/server/sessions/kernels.py). FROM_KERNEL is what the server decodes, on a 1 MiB line cap;
TO_KERNEL what the kernel decodes. docs/protocol.md lists both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from console.ids import CellId, RunId
from console.wire.codec import Max, Message, Range, Vocabulary
from console.wire.worker import RayUsage

Stream = Literal["stdout", "stderr", "system", "image"]
RunEnd = Literal["done", "error", "interrupted"]
Short = Annotated[str, Max(1024)]  # a source tag ("Network pid=12"), an error's kind
RequestId = Annotated[str, Max(64)]
Run = Annotated[RunId, Max(64)]
TO_KERNEL = Vocabulary("server->kernel")
FROM_KERNEL = Vocabulary("kernel->server")


# ---------------------------------------------------------------- server -> kernel


@TO_KERNEL.register
@dataclass(frozen=True)
class ExecuteCommand(Message):
    """Run `source` (a cell of `kind` mlsql or python) as run `run_id` of cell `cell_id`."""

    type: ClassVar[str] = "execute"
    run_id: Run
    cell_id: Annotated[CellId, Max(64)]
    source: str
    kind: Literal["mlsql", "python"] = "mlsql"
    replay: ReplayInputs | None = None  # a replay of a recorded run: read what it read


@TO_KERNEL.register
@dataclass(frozen=True)
class KernelInterrupt(Message):
    """Interrupt the running cell, or the one sent but not yet started."""

    type: ClassVar[str] = "kernel_interrupt"


@TO_KERNEL.register
@dataclass(frozen=True)
class NotebookCells(Message):
    """The answer to a notebook_request: cells as [kind, source] pairs, or the error."""

    type: ClassVar[str] = "notebook_cells"
    request_id: RequestId
    cells: list[list[str]] = field(default_factory=list)
    error: str = ""


@TO_KERNEL.register
@dataclass(frozen=True)
class EnvironmentBuilt(Message):
    """The answer to an environment_build: the sealed layer's lock hash (its folder's name under
    <data_dir>/envs), or the error (uv's words, or the limit that stopped the build)."""

    type: ClassVar[str] = "environment_built"
    request_id: RequestId
    lock_hash: Annotated[str, Max(64)] = ""
    error: Annotated[str, Max(65536)] = ""


@TO_KERNEL.register
@dataclass(frozen=True)
class KernelQuery(Message):
    """The server asks the kernel about its session, answered by kernel_answer.

    what: a row of console/kernel/queries.py HANDLERS: "result_page" (args: cell, offset, limit,
    sort), "result_file" (args: cell, format, name, sort), "complete" (args: source, cursor,
    kind), "inspect" (args: name). Answered on the kernel's command thread, so a query does not
    wait for a running cell.
    """

    type: ClassVar[str] = "kernel_query"
    request_id: RequestId
    what: str
    args: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- kernel -> server


@FROM_KERNEL.register
@dataclass(frozen=True)
class KernelReady(Message):
    """The kernel has started and waits for execute commands."""

    type: ClassVar[str] = "kernel_ready"


@FROM_KERNEL.register
@dataclass(frozen=True)
class RunStarted(Message):
    """The run began on the kernel."""

    type: ClassVar[str] = "run_started"
    run_id: Run


@FROM_KERNEL.register
@dataclass(frozen=True)
class RunOutput(Message):
    """Text the run printed; a long text comes as several of these (console/wire/channel.py)."""

    type: ClassVar[str] = "run_output"
    in_pieces: ClassVar[bool] = True
    run_id: Run
    text: str
    source: Short = "driver"
    stream: Stream = "stdout"


@FROM_KERNEL.register
@dataclass(frozen=True)
class RunMetrics(Message):
    """One metrics point of the run (Keras epochs, log_metrics): finite numbers by name."""

    type: ClassVar[str] = "run_metrics"
    run_id: Run
    values: Annotated[dict[str, float], Max(1000)]
    source: Short = "driver"
    step: int | None = None
    ts: float = 0.0


@FROM_KERNEL.register
@dataclass(frozen=True)
class RunResult(Message):
    """The run's result table: first rows, total row count, columns [{"name", "type"}]."""

    type: ClassVar[str] = "run_result"
    run_id: Run
    name: str
    columns: list[dict[str, str]]
    rows: list[list[Any]]
    total_rows: int


@FROM_KERNEL.register
@dataclass(frozen=True)
class RunRayUsage(Message):
    """What the running cell's Ray job holds (its worker's CellRayUsage), every ~1.5 s while it runs.

    The server takes it only for the kernel's current run, at most one per RAY_USAGE_INTERVAL
    (console/server/sessions/ray_usage.py), keeps the last one for the Running page and shows it on the cell.
    """

    type: ClassVar[str] = "run_ray_usage"
    run_id: Run
    usage: RayUsage


@FROM_KERNEL.register
@dataclass(frozen=True)
class RunError(Message):
    """Why the run failed, as much as its user may see (fields as the browser's error event)."""

    type: ClassVar[str] = "run_error"
    run_id: Run
    kind: Short
    message: str
    line: int | None = None
    column: int | None = None
    traceback: str = ""


@FROM_KERNEL.register
@dataclass(frozen=True)
class RunEnded(Message):
    """The run ended: how, and after how long."""

    type: ClassVar[str] = "run_ended"
    run_id: Run
    status: RunEnd
    elapsed_ms: int | None = None


MANIFEST_ENTRIES = 200  # entries of one run_manifest message; the server caps a run's total too
ManifestText = Annotated[str, Max(4096)]  # a path as the statement wrote it: a string to record, never opened
Count64 = Annotated[int, Range(0, 2**62)]


SOURCES_PER_WRITE = 16  # inputs one written table names (the rest are counted in sources_dropped)


@dataclass(frozen=True)
class SourceRef:
    """An input a written table's rows came from, through the session's catalog: a load of an earlier
    statement or cell (its run_id), named as that load's manifest entry named it."""

    format: Annotated[str, Max(64)]
    path: Annotated[str, Max(1024)]
    table: Annotated[str, Max(256)] = ""
    version: Count64 | None = None
    digest: Annotated[str, Max(80)] = ""
    run_id: Annotated[str, Max(64)] = ""  # the run that read it ("": before this kernel knew run ids)


@dataclass(frozen=True)
class ManifestEntry:
    """One input a statement read or one output it wrote, as the kernel saw it.

    statement: its number among the cell's statements (1 = the first); path: as written (a data-folder
    path as lake:…);
    table: the lake's db.table when the path is a delta table of the lake; version: the delta
    version read, or the one a write made; size/mtime/digest: a plain file's (or folder's) bytes,
    modification time (s) and sha256 of its first 64 KiB (of a folder: of its file listing).
    """

    access: Literal["read", "write"]
    format: Annotated[str, Max(64)]
    path: ManifestText
    statement: Annotated[int, Range(0, 1_000_000)] = 0
    line: Annotated[int, Range(0, 10_000_000)] = 0
    table: Annotated[str, Max(256)] = ""
    version: Count64 | None = None
    mode: Annotated[str, Max(32)] = ""
    size: Count64 | None = None
    files: Count64 | None = None
    mtime: float | None = None
    digest: Annotated[str, Max(80)] = ""
    # A write's lineage: the inputs its table came from, and when that table is a model (a Python
    # cell's output under dataMode=model, or `train`'s), the run that trained it.
    sources: Annotated[list[SourceRef], Max(SOURCES_PER_WRITE)] = field(default_factory=list)
    sources_dropped: Annotated[int, Range(0, 2**31)] = 0
    model: bool = False
    trained_by: Annotated[str, Max(64)] = ""


@dataclass(frozen=True)
class ReplayInputs:
    """What a replayed run read, as its manifest recorded it (console/server/api/rerun.py): each delta
    table of the lake at its version (`pins`, by the table's lake name, db.table), each plain file
    with the facts it had (`files`); a file whose facts differ now fails the replay unless `force`."""

    pins: Annotated[dict[str, Count64], Max(MANIFEST_ENTRIES)] = field(default_factory=dict)
    files: Annotated[list[ManifestEntry], Max(MANIFEST_ENTRIES)] = field(default_factory=list)
    force: bool = False
    lock_hash: Annotated[str, Max(64)] | None = None  # the environment's lock it ran in ("": the base; None: unknown)


@FROM_KERNEL.register
@dataclass(frozen=True)
class RunManifest(Message):
    """What the run read and wrote (load and save statements), sent before its run_ended.

    The kernel's word: the server keeps it with the run for its current run only, caps a run's
    entries, and checks delta versions against the lake's own logs (console/server/sessions/manifests.py).
    """

    type: ClassVar[str] = "run_manifest"
    run_id: Run
    entries: Annotated[list[ManifestEntry], Max(MANIFEST_ENTRIES)] = field(default_factory=list)
    dropped: Annotated[int, Range(0, 2**31)] = 0  # entries past what one message carries
    lock_hash: Annotated[str, Max(64)] = ""  # the notebook environment's lock its Python ran in ("": the base)


@FROM_KERNEL.register
@dataclass(frozen=True)
class KernelLogEvent(Message):
    """A record of the kernel's own log, written to the server's log, never shown.

    level: a logging level number; text: the formatted record, traceback included.
    """

    type: ClassVar[str] = "kernel_log"
    level: int
    text: str


@FROM_KERNEL.register
@dataclass(frozen=True)
class NotebookRequest(Message):
    """The kernel asks for a notebook's cells by name, for `include notebook.`name``.

    The server reads its store and answers with notebook_cells; the kernel never opens the database.
    """

    type: ClassVar[str] = "notebook_request"
    request_id: RequestId
    name: Annotated[str, Max(1024)]


@FROM_KERNEL.register
@dataclass(frozen=True)
class KernelAnswer(Message):
    """The answer to a kernel_query: data, or error (a message the asker may see)."""

    type: ClassVar[str] = "kernel_answer"
    request_id: RequestId
    data: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    bad_request: bool = False  # the error is about the question (a ValueError), not a missing answer


@FROM_KERNEL.register
@dataclass(frozen=True)
class EnvironmentChanged(Message):
    """`%pip` changed the notebook's requirements during the current run; the server keeps them with
    the notebook (console/wire/environment.py checks them again: the bounds here only cap the line)."""

    type: ClassVar[str] = "environment_changed"
    run_id: Run
    requirements: Annotated[list[Annotated[str, Max(512)]], Max(200)]
    lock_hash: Annotated[str, Max(64)] = ""


@FROM_KERNEL.register
@dataclass(frozen=True)
class EnvironmentBuild(Message):
    """A sandboxed kernel asks the server to build the layer of a lock it resolved, shared by every
    session with the same lock: the server names it by the lock's hash itself, installs it in a
    sandbox of its own (a one-off uid, the session's cgroups, uv only) and seals it (its own files,
    read-only) before it answers with environment_built (console/server/sessions/env_builds.py)."""

    type: ClassVar[str] = "environment_build"
    request_id: RequestId
    lock: Annotated[str, Max(512 * 1024)]


RunMessage = RunStarted | RunOutput | RunMetrics | RunResult | RunError | RunEnded | RunManifest
