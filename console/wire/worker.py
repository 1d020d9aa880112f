"""The kernel <-> cell worker vocabulary: the socket pair between a kernel and its Python worker.

The worker runs the member's cell code, so the kernel decodes what it sends (FROM_WORKER) as
untrusted: every field's type checked, a line capped at 1 MiB, a long text in pieces, answers
matched to their requests (console/wire/channel.py). TO_WORKER is what the worker decodes.
Both ends import this same console package (the kernel puts it first on the worker's
PYTHONPATH whatever PYTHON_ENV activates). docs/protocol.md lists both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, ClassVar, Literal

from console.wire.codec import Max, Message, Range, Vocabulary
from console.wire.head import ClusterInfo

TO_WORKER = Vocabulary("kernel->worker")
FROM_WORKER = Vocabulary("worker->kernel")
Short = Annotated[str, Max(1024)]  # a source tag ("Network pid=12"), an error's kind
Stream = Literal["stdout", "stderr", "system", "image"]
JobId = Annotated[str, Max(64)]


FD_MARK = b"\x00console-fd-mark "  # + job_id + "\n": see CellDone.marked


def fd_mark(job_id: str) -> bytes:
    """The line the worker writes on its fd 1 and 2 before CellDone (shorter than PIPE_BUF: atomic)."""
    return FD_MARK + job_id.encode() + b"\n"


@dataclass(frozen=True)
class CellError:
    """Why a Python cell failed, as the user should see it (part of CellDone, not a message).

    kind: "python" | "schema" | "interrupted"; line: the cell line; traceback: our frames left out.
    """

    kind: Short
    message: str
    line: int | None = None
    traceback: str = ""


@FROM_WORKER.register
@dataclass(frozen=True)
class WorkerReady(Message):
    """The worker has started (PYTHON_ENV worked) and waits for jobs."""

    type: ClassVar[str] = "worker_ready"
    pid: int
    python_version: str


@TO_WORKER.register
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


@FROM_WORKER.register
@dataclass(frozen=True)
class CellOutput(Message):
    """Text the cell printed (Python-level sys.stdout/stderr, actors' forwarded lines included)."""

    type: ClassVar[str] = "cell_output"
    in_pieces: ClassVar[bool] = True
    job_id: JobId
    text: str
    source: Short
    stream: Stream


@FROM_WORKER.register
@dataclass(frozen=True)
class CellMetrics(Message):
    """A metrics point the cell reported (log_metrics, or a Keras epoch line)."""

    type: ClassVar[str] = "cell_metrics"
    job_id: JobId
    values: Annotated[dict[str, float], Max(1000)]
    source: Short
    step: int | None = None


LISTED = 20  # actors and tasks a usage report names; the counts cover all of them
Count = Annotated[int, Range(0, 10**9)]
Label = Annotated[str, Max(200)]  # a class or function name, a node's address
ActorState = Literal["alive", "pending", "restarting", "dead"]
TaskState = Literal["running", "pending", "finished", "failed"]


@dataclass(frozen=True)
class RayActor:
    """One actor of the cell's Ray job (part of RayUsage): class, state, node address, CPUs held."""

    class_name: Label
    state: ActorState
    node: Label = ""
    cpus: float = 0.0


@dataclass(frozen=True)
class RayTask:
    """The cell's Ray tasks of one function in one state (part of RayUsage): how many, where, CPUs."""

    name: Label
    state: TaskState
    count: Count = 1
    node: Label = ""  # one node's address; "" when pending, or on several nodes
    cpus: float = 0.0  # each task's CPU request


@dataclass(frozen=True)
class RayUsage:
    """What a running cell's Ray job holds, read from the cluster's GCS (console/worker/ray_usage.py).

    Counts cover the whole job; `actors` and `tasks` name at most LISTED of them (live ones
    first). tasks_* are None when the GCS gave no task events (`note` says why). cpus_in_use:
    the CPUs the job's alive actors and running tasks requested; cluster_*: the whole cluster's.
    """

    actors_alive: Count = 0
    actors_pending: Count = 0
    actors_dead: Count = 0
    actors: Annotated[list[RayActor], Max(LISTED)] = field(default_factory=list)
    tasks_running: Count | None = None
    tasks_pending: Count | None = None
    tasks_finished: Count | None = None
    tasks_failed: Count | None = None
    tasks: Annotated[list[RayTask], Max(LISTED)] = field(default_factory=list)
    cpus_in_use: float = 0.0
    cluster_cpus: float = 0.0
    cluster_cpus_used: float = 0.0
    nodes: Annotated[list[Label], Max(LISTED)] = field(default_factory=list)
    note: Annotated[str, Max(300)] = ""


@FROM_WORKER.register
@dataclass(frozen=True)
class CellRayUsage(Message):
    """Every ~1.5 s while a cell is a Ray driver, and once before its CellDone: its job's usage."""

    type: ClassVar[str] = "cell_ray_usage"
    job_id: JobId
    usage: RayUsage


@FROM_WORKER.register
@dataclass(frozen=True)
class NeedCluster(Message):
    """The cell uses Ray: the kernel answers ClusterInfo (starting its head if needed) or ClusterUnavailable."""

    type: ClassVar[str] = "need_cluster"
    job_id: JobId


@TO_WORKER.register
@dataclass(frozen=True)
class ClusterFound(Message):
    """The notebook's Ray cluster (console/wire/head.py ClusterInfo: address, client_address, …)."""

    type: ClassVar[str] = "cluster_info"
    info: ClusterInfo


@TO_WORKER.register
@dataclass(frozen=True)
class ClusterUnavailable(Message):
    """The cluster could not be started; the cell sees it as its own error."""

    type: ClassVar[str] = "cluster_unavailable"
    message: str


@FROM_WORKER.register
@dataclass(frozen=True)
class CellDone(Message):
    """The cell ended: result_path holds its output table (or None), error why it failed (or None).

    marked: the streams ("stdout", "stderr") whose fd carried fd_mark(job_id) just before this
    message: the kernel reads each of them up to the mark, so fd-level output the cell wrote
    (C libraries, subprocesses) is in the cell's output before it ends.
    """

    type: ClassVar[str] = "cell_done"
    job_id: JobId
    result_path: str | None
    error: CellError | None
    marked: tuple[str, ...] = ()


@TO_WORKER.register
@dataclass(frozen=True)
class WorkerExit(Message):
    """Finish: end the cell's Ray job and exit."""

    type: ClassVar[str] = "worker_exit"


@TO_WORKER.register
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


@TO_WORKER.register
@dataclass(frozen=True)
class WorkerComplete(Message):
    """Between cells: Python completion at line (1-based) / column (0-based) over the session's globals."""

    type: ClassVar[str] = "worker_complete"
    request_id: str
    source: str
    line: int
    column: int


@TO_WORKER.register
@dataclass(frozen=True)
class WorkerVariables(Message):
    """Between cells: the session's Python globals as the variable explorer lists them (metadata only)."""

    type: ClassVar[str] = "worker_variables"
    request_id: str


@FROM_WORKER.register
@dataclass(frozen=True)
class WorkerVariableList(Message):
    """The answer to WorkerVariables: items {"name", "type", "size", "value"}, all text."""

    type: ClassVar[str] = "worker_variable_list"
    request_id: JobId
    items: list[dict[str, str]]


@FROM_WORKER.register
@dataclass(frozen=True)
class WorkerCompletion(Message):
    """The answer to WorkerComplete: items {"label", "type", "detail"} from jedi.Interpreter."""

    type: ClassVar[str] = "worker_completion"
    request_id: JobId
    items: list[dict[str, str]]
