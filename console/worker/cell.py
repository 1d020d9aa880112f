"""Running one cell inside the worker: namespace, Ray connection, errors as the user should see them.

The code is compiled with blank lines in front of it, so every line number Python reports, in the
driver or in an actor the cell defined, is already a line of the notebook cell.
"""
from __future__ import annotations

import builtins
import gc
import json
import linecache
import logging
import os
import re
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import pyarrow as pa

from console.actors.data import DataServer, clear_registry
from console.worker.ray_connect import init_ray
from console.wire.head import ClusterInfo
from console.wire.worker import (CellDone, CellError, ClusterFound, ClusterUnavailable, NeedCluster, RunJob,
                                 WorkerComplete, WorkerCompletion, WorkerVariableList, WorkerVariables, fd_mark)
from console.worker.actorlogs import for_current_job
from console.worker.channel import Channel, ChannelStream
from console.worker.context import PARAMS_KEY, PythonContext, model_servers, ray_connected, running
from console.worker.ray_usage import UsageReporter
from console.worker.schema import SchemaError


CELL_FILE = "<cell>"
_OURS = (str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "pyjava"))
_USES_RAY = re.compile(r"\bray\b")
QUIET = 0.4  # seconds without a forwarded line that end the drain when lines cannot be counted
DRAIN_SECONDS = 30.0  # at most, for the lines a cell's actors wrote to reach its output
# After an interrupt, less: the kernel kills a worker that has not ended its cell 10 s after SIGINT
# (python_runtime.INTERRUPT_GRACE), and the usage reporter may take 3 of them. A longer drain (its
# actors still run, and Ray's log monitor lags on a loaded machine) would turn the interrupt into a
# kill that loses the session's globals; lines still in flight are counted in the cell's output.
DRAIN_INTERRUPTED_SECONDS = 4.0


def compile_cell(code: str, code_line: int) -> Any:
    source = "\n" * max(0, code_line - 1) + code
    linecache.cache[CELL_FILE] = (len(source), None, source.splitlines(True), CELL_FILE)
    return compile(source, CELL_FILE, "exec")


def new_globals() -> dict[str, Any]:
    return {"__name__": "__main__", "__builtins__": builtins}


class _Flag:
    """Set by the cell's SIGINT handler: the kernel interrupted this cell."""

    def __init__(self) -> None:
        self.seen = False

    def clear(self) -> None:
        self.seen = False


SIGINT_SEEN = _Flag()


def _on_sigint(signum: int, frame: Any) -> None:
    # Library code may catch the KeyboardInterrupt and raise something else (Keras and TensorFlow
    # wrap errors raised inside their loops), or swallow it; the flag keeps what the user asked.
    SIGINT_SEEN.seen = True
    raise KeyboardInterrupt


def execute(code: str, code_line: int, context: PythonContext, ns: dict[str, Any] | None = None) -> None:
    """Run the cell's code with `context`; SIGINT raises KeyboardInterrupt.

    ns: the session's globals, kept between cells (the worker's CellRunner.globals); without
    one the cell gets a fresh namespace that is cleared afterwards (actors, model functions).
    """
    keep = ns is not None
    if ns is None:
        ns = new_globals()
    ns["context"] = ns["data_manager"] = context  # this cell's; the previous cell's goes
    compiled = compile_cell(code, code_line)
    on_main = _main_thread()
    SIGINT_SEEN.clear()
    if on_main:
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        with running(context):
            exec(compiled, ns)
    finally:
        if on_main:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if not keep:
            ns.clear()


def holds_actors(ns: dict[str, Any]) -> bool:
    """True when a global (or a list/tuple/dict/set in one) is a Ray actor handle.

    Such a session keeps its Ray connection after the cell, so the actors live on; ending the
    connection would end the cell's Ray job and every actor with it.
    """
    return bool(actor_globals(ns))


def actor_globals(ns: dict[str, Any]) -> list[str]:
    """The globals that are, or hold, Ray actor handles (what keeps the session's Ray job alive)."""
    actor_handle = getattr(sys.modules.get("ray.actor"), "ActorHandle", None)
    if actor_handle is None:
        return []
    names = []
    for name, value in ns.items():
        if name.startswith("__") or name in ("context", "data_manager"):
            continue
        values = value.values() if isinstance(value, dict) else value if isinstance(
            value, (list, tuple, set, frozenset)) else (value,)
        try:
            if any(isinstance(v, actor_handle) for v in values):
                names.append(name)
        except Exception:  # an odd container: it holds no handle we can see
            continue
    return names


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def describe(exc: BaseException, interrupted: bool = False) -> CellError:
    """kind, message, cell line and the user's traceback (our own frames left out).

    interrupted: SIGINT came during the cell, so it ended because the user stopped it, whatever
    exception reached us (a KeyboardInterrupt anywhere in the chain says the same).
    """
    cause = exc
    try:
        from ray.exceptions import RayTaskError

        if isinstance(exc, RayTaskError) and exc.cause is not None:
            cause = exc.cause
    except ImportError:
        pass
    tbe = traceback.TracebackException.from_exception(exc)
    chain = _chain(tbe)
    if (interrupted or isinstance(exc, KeyboardInterrupt) or type(cause).__name__ in ("TaskCancelledError",)
            or any(part.exc_type is KeyboardInterrupt for part in chain)):
        kind = "interrupted"
    elif isinstance(cause, SchemaError):
        kind = "schema"
    else:
        kind = "python"
    line = None
    for part in chain:
        kept = [f for f in part.stack if not f.filename.startswith(_OURS)]
        part.stack = traceback.StackSummary.from_list(kept)
        for frame in kept:
            if frame.filename == CELL_FILE:
                line = frame.lineno
    if line is None:  # an actor's frames only appear in the remote traceback text
        found = re.findall(r'File "<cell>", line (\d+)', str(exc))
        line = int(found[-1]) if found else None
    message = "".join(traceback.format_exception_only(type(cause), cause)).strip()
    if kind == "interrupted":
        raised = "" if isinstance(cause, KeyboardInterrupt) else f"; the cell then raised {message}"
        message = f"interrupted (KeyboardInterrupt){raised}"
    return CellError(kind=kind, message=message, line=line, traceback="".join(tbe.format()))


def _chain(tbe: traceback.TracebackException) -> list[traceback.TracebackException]:
    out, seen = [], set()
    cur: traceback.TracebackException | None = tbe
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        out.append(cur)
        cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
    return out


def read_ipc(path: str | None) -> pa.Table | None:
    if not path:
        return None
    with pa.memory_map(path) as source:
        return pa.ipc.open_file(source).read_all()  # buffers stay mapped: no copy


def write_ipc(table: pa.Table, path: str) -> None:
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


class WorkerHost:
    """JobHost inside the cell worker: Ray comes from the kernel's cluster, asked for on first need."""

    def __init__(self, runner: "CellRunner", job: RunJob) -> None:
        self.runner = runner
        self.job = job
        self.cluster: ClusterInfo | None = None

    def cluster_info(self) -> ClusterInfo:
        if self.cluster is None:
            self.cluster = self.runner.ask_cluster()
            os.environ["RAY_ADDRESS"] = self.cluster.address  # a bare ray.init() in the cell joins it
            if self.cluster.auth_token:  # the embedded head refuses drivers without it
                os.environ.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.cluster.auth_token})
                if "ray" in sys.modules:  # Ray read its auth settings at import: it reads them again
                    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

                    Config.initialize("")
                    AuthenticationTokenLoader.instance().reset_cache()
        return self.cluster

    def connect_ray(self, url: str | None, **kwargs: Any) -> None:
        import ray

        info = self.cluster_info()
        if ray.is_initialized():
            return  # already this cell's driver on the notebook's cluster: reuse, as pyjava did
        if url and url not in ("local", "auto", "worker") and not _loopback(url) and url != info.client_address:
            print(f"[console] RayContext.connect: {url} is not this notebook's Ray cluster; "
                  f"using {info.address}", file=sys.stderr)
        runtime_env = dict(kwargs.pop("runtime_env", None) or {})
        env_vars = {**self.job.actor_env, **runtime_env.get("env_vars", {})}
        runtime_env["env_vars"] = env_vars
        hook = "console.actors.capture.actor_setup_hook"
        if info.address.startswith("ray://"):
            # Ray Client ignores worker_process_setup_hook; a GCS driver turns a module hook into
            # this variable, which is what workers read, so a client driver sets it itself.
            from ray._private.ray_constants import WORKER_PROCESS_SETUP_HOOK_ENV_VAR

            env_vars.setdefault(WORKER_PROCESS_SETUP_HOOK_ENV_VAR, hook)
        else:
            runtime_env.setdefault("worker_process_setup_hook", hook)
        if self.job.ship_modules:
            root = Path(__file__).resolve().parents[2]
            runtime_env.setdefault("py_modules", [str(root / "pyjava"), str(root / "console")])
            runtime_env.setdefault("excludes", ["**/static/**", "**/__pycache__/**", "**/*.pyc"])
        kwargs.setdefault("namespace", "default")
        # A GCS driver puts its working dir first on its actors' sys.path. Started in this
        # checkout, that would shadow the shipped copies on any node that sees the same path
        # (a node on this machine, a shared filesystem): actors would mix both versions.
        here = os.getcwd()
        shadowing = self.job.ship_modules and Path(here).resolve() == Path(__file__).resolve().parents[2]
        if shadowing:
            os.chdir("/")
        try:
            init_ray(info.address, runtime_env=runtime_env, log_to_driver=True, logging_level=logging.WARNING,
                     **kwargs)
        except ConnectionError as exc:
            if info.embedded or info.auth_token or not unanswered(exc):
                raise
            # An existing cluster refuses a driver without its token by not answering: say what to check.
            raise ConnectionError(f"{exc} (the cluster at {info.address}: if it runs Ray's token "
                                  f"authentication, give the server its token with CONSOLE_RAY_AUTH_TOKEN_FILE)"
                                  ) from exc
        finally:
            if shadowing:
                os.chdir(here)

    def default_partitions(self) -> int:
        if self.job.num_partitions:
            return self.job.num_partitions
        if ray_connected():
            import ray

            return max(1, int(ray.cluster_resources().get("CPU", 1)))
        return self.job.default_partitions or os.cpu_count() or 1


# What Ray says when a cluster never answers the driver (`ray.init`): over the Ray client, and
# over the GCS address. A cluster that runs token authentication refuses a driver without its
# token so. Other failures (no local raylet, a node that died) get no token hint: it misled.
_UNANSWERED = ("ray client connection timeout", "Failed to connect to Ray cluster")


def unanswered(exc: BaseException) -> bool:
    """True when `ray.init` failed because the cluster never answered."""
    return any(words in str(exc) for words in _UNANSWERED)


def _loopback(url: str) -> bool:
    host = url.split("://")[-1].rsplit(":", 1)[0]
    return host in ("127.0.0.1", "localhost", "0.0.0.0", "::1") or host.startswith("127.")


def mark_fds(job_id: str) -> tuple[str, ...]:
    """Write fd_mark(job_id) on fd 1 and 2; the streams written (a cell may have closed one).

    Output written below Python (C libraries, subprocesses) reaches the kernel on these pipes, not
    on the socket: the mark tells the kernel where this cell's part of each pipe ends.
    """
    marked: list[str] = []
    for fd, stream in ((1, "stdout"), (2, "stderr")):
        try:
            os.write(fd, fd_mark(job_id))
            marked.append(stream)
        except OSError:
            pass
    return tuple(marked)


class CellRunner:
    """Runs the kernel's jobs in this process (runIn=driver) or in a Ray actor (runIn=executor)."""

    def __init__(self, channel: Channel, out: ChannelStream, err: ChannelStream) -> None:
        self.channel, self.out, self.err = channel, out, err
        # The session's Python globals: every driver-side cell of this worker shares them, as in a
        # Jupyter kernel; a kernel restart ends the worker and so clears them.
        self.globals: dict[str, Any] = new_globals()
        self.interrupt_next = False  # SIGINT came while a completion ran (see complete)

    def complete(self, msg: WorkerComplete) -> None:
        """Answer a completion request over the session's globals (between cells only).

        Bounded in time (complete.WORKER_SECONDS); an interrupt that arrives meanwhile is for
        the job the kernel sent after it, which then ends at once as interrupted.
        """
        from console.worker.complete import bounded_items

        items, interrupted = bounded_items(msg.source, msg.line, msg.column, self.globals)
        self.interrupt_next = self.interrupt_next or interrupted
        self.channel.send(WorkerCompletion(request_id=msg.request_id, items=items))

    def variables(self, msg: WorkerVariables) -> None:
        """The variable explorer's list of the session's globals (between cells only; metadata only)."""
        from console.worker.variables import variables

        self.channel.send(WorkerVariableList(request_id=msg.request_id, items=variables(self.globals)))

    def ask_cluster(self) -> ClusterInfo:
        self.channel.send(NeedCluster(job_id=self.channel.job_id))
        while True:
            msg = self.channel.recv()
            if isinstance(msg, ClusterFound):
                return msg.info
            if isinstance(msg, ClusterUnavailable):
                raise RuntimeError(f"the notebook's Ray cluster is not available: {msg.message}")

    def run(self, job: RunJob) -> None:
        self.channel.job_id = job.job_id
        result_path, error = None, None
        reporter = UsageReporter(self.channel.send, job.job_id)  # the job's Ray actors and tasks, live
        SIGINT_SEEN.clear()  # a flag left by the last cell must not mark this one's failure
        try:
            if self.interrupt_next:
                self.interrupt_next = False
                raise KeyboardInterrupt
            host = WorkerHost(self, job)
            conf = dict(job.conf)
            if _USES_RAY.search(job.code):
                host.cluster_info()
            context = PythonContext(job.job_id, [], conf, table=read_ipc(job.input_path),
                                    model_table=read_ipc(job.model_path), host=host,
                                    table_path=job.input_path)
            if context._model_table is not None:
                conf["modelServers"] = model_servers(context._model_table, conf.get("timezone", "UTC"))
            if conf.get("runIn", "driver") == "executor":
                output = self._run_in_actor(host, job, context)
            else:
                execute(job.code, job.code_line, context, self.globals)
                output = context.output()
            if output is not None:
                write_ipc(output, job.output_path)
                result_path = job.output_path
        except BaseException as exc:  # the cell's failure is data for the kernel
            error = exc.args[0] if isinstance(exc, _RemoteCellError) else describe(exc, SIGINT_SEEN.seen)
        finally:
            reporter.stop()
            interrupted = error is not None and error.kind == "interrupted"
            if interrupted and ray_connected() and holds_actors(self.globals):
                # A sync actor's running method cannot be cancelled, only killed: the interrupt
                # stops the work the user asked to stop, so the session's Ray job ends (release).
                print("[console] the interrupt ends this session's Ray job: the actors held in its "
                      "globals are gone; create them again to use them", file=sys.stderr)
            elif error is not None and ray_connected():
                held = actor_globals(self.globals)
                if held:
                    # Issue 30: a failed cell's actors lived on unseen (the Running page said "+1 pending",
                    # the notebook nothing). They stay, since a user may want them, and the cell says so.
                    print(f"[console] the cell failed, and the Ray actors held by {', '.join(held[:5])} stay "
                          "alive in this session with the CPUs they reserved: `del` them (or restart the "
                          "session) to end them", file=sys.stderr)
            self._end_cell(DRAIN_INTERRUPTED_SECONDS if interrupted else DRAIN_SECONDS)
        self.channel.send(CellDone(job_id=job.job_id, result_path=result_path, error=error,
                                   marked=mark_fds(job.job_id)))
        self.channel.job_id = ""
        self.release(end_job=interrupted)

    def _run_in_actor(self, host: WorkerHost, job: RunJob, context: PythonContext) -> pa.Table | None:
        import ray

        host.connect_ray("auto")
        servers = context.rayContext.data_servers()
        actor: Any = ray.remote(num_cpus=0)(CellExecutor).remote()  # an ActorHandle
        conf = {**context.conf, PARAMS_KEY: json.dumps(context.params)}  # the actor's context.params
        output, error = ray.get(actor.run.remote(job.code, job.code_line, conf, servers))
        if error is not None:
            raise _RemoteCellError(error)
        return output

    def _end_cell(self, drain_seconds: float = DRAIN_SECONDS) -> None:
        """Before CellDone: the cell's last output reaches this cell's stream."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if ray_connected():
            self._drain_actor_output(drain_seconds)
        os.environ.pop("RAY_ADDRESS", None)
        clear_registry()
        linecache.cache.pop(CELL_FILE, None)
        self.out.flush_all()
        self.err.flush_all()

    def _drain_actor_output(self, seconds: float) -> None:
        """Wait until every line the cell's actors wrote on this node has arrived (at most `seconds`).

        Ray's log monitor forwards a big burst over seconds; ending the job earlier would drop
        its tail. Lines of actors on other nodes cannot be counted here: for them, wait until
        the stream has been quiet for 0.4 s. Both conditions change only when a forwarded line
        arrives (Ray's log thread sets `arrived`), so that is what the loop waits on.
        """
        logs = for_current_job()
        arrived = self.out.arrived
        deadline = time.monotonic() + seconds
        while True:
            arrived.clear()  # before looking: a line arriving from here on wakes the wait below
            now = time.monotonic()
            if logs is not None and logs.missing(self.out.forwarded + self.err.forwarded) == 0:
                return
            quiet = now - max(self.out.last_forwarded, self.err.last_forwarded)
            if logs is None and quiet >= QUIET:
                return
            if now >= deadline:
                break
            arrived.wait(deadline - now if logs is not None else min(deadline - now, QUIET - quiet))
        missing = logs.missing(self.out.forwarded + self.err.forwarded) if logs is not None else 0
        if missing:
            print(f"[console] {missing} actor output lines were still in flight after {seconds:g} s",
                  file=sys.stderr)

    def release(self, end_job: bool = False) -> None:
        """After CellDone (off the cell's wall time, ~0.4 s with TensorFlow loaded): the worker
        handles nothing else until this returns, so the next cell still starts with no Ray job.

        The job stays while a global holds an actor handle, unless `end_job` (an interrupt)."""
        try:
            if ray_connected() and (end_job or not holds_actors(self.globals)):
                import ray

                ray.shutdown()  # ends this cell's Ray job: its actors and tasks go with it
        except Exception as exc:  # a broken connection must not take the worker down
            print(f"[console] ray.shutdown failed: {exc}", file=sys.__stderr__)
        gc.collect()  # the cell's cycles, e.g. Keras models (0.15 s with TensorFlow imported)

    def close(self) -> None:
        self._end_cell()
        self.globals.clear()  # the session ends: its actor handles no longer keep Ray connected
        self.release()


class _RemoteCellError(Exception):
    """The error dict of a cell that ran in an actor (runIn=executor)."""


class CellExecutor:
    """runIn=executor: the cell's driver code, run inside a Ray actor."""

    def run(self, code: str, code_line: int, conf: dict[str, str],
            servers: list[DataServer]) -> tuple[pa.Table | None, CellError | None]:
        from console.worker.context import RayContext

        tables = [s.arrow() for s in servers]
        table = pa.concat_tables(tables) if tables else pa.table({})
        context = PythonContext("", [], conf, table=table)
        context.rayContext._servers = servers
        try:
            execute(code, code_line, context)
            return context.output(), None
        except BaseException as exc:
            return None, describe(exc)
        finally:
            RayContext.cache.clear()
