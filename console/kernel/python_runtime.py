"""PythonRuntime: the kernel's side of Python cells: worker processes, hand-off, events, errors.

The worker (console/worker/) is driven through worker_process.py; the messages on its socket are
console/wire/worker.py's, and the worker runs the member's code, so what it says is checked:
its output table is read only from the path this runtime chose for the job.
Tables travel as Arrow IPC files on /dev/shm where there is one: the input and model tables are
kept while the kernel's table object lives (ipcfiles.py), the output goes in a per-job folder.
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, NoReturn

from console.actors.capture import stream_of
from console.actors.fragments import FRAGMENTS_KEY
from console.cluster.head import RAY_ENV, RayCluster
from console.cluster.walls import handoff_group
from console.kernel.ipcfiles import IpcFiles, scratch_dir
from console.kernel.job import PythonCellError, PythonJob
from console.kernel.worker_process import FdLine, Wake, WorkerProcess, death_message
from console.wire.cell import Metrics, Output
from console.wire.channel import new_request_id
from console.wire.worker import (CellDone, CellMetrics, CellOutput, CellRayUsage, ClusterFound, ClusterUnavailable,
                                 NeedCluster, RunJob, WorkerComplete, WorkerCompletion, WorkerVariableList,
                                 WorkerVariables)

Emit = Callable[[Any], None]
INTERRUPT_GRACE = 10.0  # seconds between SIGINT and SIGKILL
# Library code can swallow a KeyboardInterrupt (TensorFlow does when it lands inside its own
# handlers): the worker gets SIGINT again this often during the grace, as a user pressing interrupt
# again would send it, so the cell stops and keeps its session instead of losing it to the kill.
INTERRUPT_AGAIN = 1.0
READY_TIMEOUT = 120.0  # PYTHON_ENV may activate a slow conda env
# CellDone -> the worker's marks on its fd 1 and 2: normally at once; longer only if the cell
# pointed fd 1 or 2 somewhere else, and then the marks never come.
MARK_TIMEOUT = 2.0
_ROOT = Path(__file__).resolve().parents[2]  # the folder holding console/ and pyjava/


class PythonRuntime:
    """Runs PythonJobs in reusable worker processes on the notebook's Ray cluster.

    emit(Output | Metrics) is called only from the thread that called run().
    interrupt() may be called from any thread.
    """

    def __init__(self, cfg: Any, emit: Emit, cluster: RayCluster | None = None,
                 user_env: dict[str, str] | None = None) -> None:
        self.cfg = cfg
        self.emit = emit
        self.user_env = dict(user_env or {})  # the session's writable folders (kernel/userdirs.py)
        self.cluster = cluster or RayCluster(cfg)
        self._worker: WorkerProcess | None = None
        self._lock = threading.Lock()
        self._query = threading.Lock()  # a completion and the start of a run never overlap on the worker
        self._interrupted_at: float | None = None
        self._running = False
        self._used_cluster = False
        self._scratch = scratch_dir(handoff_group(cfg))  # readable by the Ray zone's actors
        self._tables = IpcFiles(self._scratch)
        # The notebook's package layer (console/kernel/envs.py): on the worker's PYTHONPATH, in
        # front of the base's site-packages; a new layer means a new worker.
        self.layer_path: str | None = None

    # ---- public
    def run(self, job: PythonJob, send_as: Callable[[RunJob], Any] | None = None) -> "Any":
        """Run the job; return its output table (pyarrow.Table) or None. Raises PythonCellError.

        send_as: the message that carries the job, when not a RunJob (raydeploy's UdfCall).
        """
        import pyarrow as pa

        job_dir = self._scratch / uuid.uuid4().hex[:12]
        job_dir.mkdir()
        try:
            run_job = self._run_job(job, job_dir)
            with self._query, self._lock:
                self._interrupted_at = None
                self._running = True
            worker = self._worker_for(job)
            worker.discard_pending()  # a fresh worker's start-up lines that came after WorkerReady
            try:
                worker.send(run_job if send_as is None else send_as(run_job))
            except OSError:  # it died just now
                self._died(worker)
            result_path = self._loop(worker, run_job.job_id)
            if result_path not in (None, run_job.output_path):  # never a file the worker picked
                self._discard(worker)
                raise PythonCellError("worker", "the Python worker broke the protocol and was stopped "
                                                "(its result is not at the path it was given)")
            if result_path is None:
                return None
            with pa.memory_map(result_path) as src:
                table = pa.ipc.open_file(src).read_all()
            return table.combine_chunks() if table.num_rows else table  # copied out of the job folder
        finally:
            with self._lock:
                self._running = False
            shutil.rmtree(job_dir, ignore_errors=True)

    def complete(self, source: str, line: int, column: int, timeout: float = 2.0) -> list[dict[str, str]] | None:
        """jedi's completions over the worker's globals; None when no idle worker can answer."""
        with self._query:
            with self._lock:
                worker = None if self._running else self._worker
            if worker is None or not worker.alive():
                return None
            ask = WorkerComplete(request_id=new_request_id(), source=source, line=line, column=column)
            try:
                return worker.channel.request(ask, WorkerCompletion, timeout).items
            except (ConnectionError, TimeoutError):
                return None

    def variables(self, timeout: float = 2.0) -> list[dict[str, str]] | None:
        """The worker's globals for the variable explorer; None when no idle worker can answer."""
        with self._query:
            with self._lock:
                worker = None if self._running else self._worker
            if worker is None or not worker.alive():
                return None
            ask = WorkerVariables(request_id=new_request_id())
            try:
                return worker.channel.request(ask, WorkerVariableList, timeout).items
            except (ConnectionError, TimeoutError):
                return None

    def interrupt(self) -> None:
        """KeyboardInterrupt in the running cell; the worker is killed if it is still busy after the grace."""
        with self._lock:
            if not self._running:
                return
            if self._interrupted_at is None:
                self._interrupted_at = time.monotonic()
            worker = self._worker
        if worker is not None and worker.alive():
            _sigint(worker)
            worker.inbox.put(Wake())  # the run loop now has a deadline: INTERRUPT_GRACE

    def shutdown(self, stop_cluster: bool = False, release: bool = True) -> None:
        """Stop the worker and release the embedded Ray head.

        The head stops when its last user process releases it, unless a server took ownership
        (RayCluster.own()); stop_cluster=True stops it regardless.
        """
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()
        self._tables.clear()
        shutil.rmtree(self._scratch, ignore_errors=True)
        if stop_cluster:
            self.cluster.stop()
        elif self._used_cluster and release:  # release=False: the cluster is shared with another runtime
            self.cluster.release()

    # ---- internals
    def _run_job(self, job: PythonJob, job_dir: Path) -> RunJob:
        conf = dict(job.conf)
        conf.setdefault("pythonMode", "ray")
        conf.setdefault("timezone", "UTC")
        input_path = model_path = None
        if job.input_table is not None and FRAGMENTS_KEY not in conf:  # else actors read the files
            input_path = self._tables.path_for(job.input_table, job_dir, "input.arrow")
        if job.model_table is not None:
            model_path = self._tables.path_for(job.model_table, job_dir, "model.arrow")
        return RunJob(job_id=uuid.uuid4().hex, code=job.code, code_line=int(job.code_line or 1), conf=conf,
                      output_path=str(job_dir / "output.arrow"), actor_env=self._actor_env(job),
                      ship_modules=self._ship_modules(job),
                      default_partitions=int(self.cfg.get("RAY_NUM_CPUS") or os.cpu_count() or 1),
                      num_partitions=job.num_partitions, input_path=input_path, model_path=model_path)

    def _actor_env(self, job: PythonJob) -> dict[str, str]:
        env = {k: v for k, v in RAY_ENV.items() if k.startswith("TF_")}
        env["TF_USE_LEGACY_KERAS"] = "1"
        env.update({k: str(v) for k, v in job.env.items() if k != "PYTHON_ENV"})
        if self.layer_path:
            # The notebook's packages on its actors too: Ray expands ${PYTHONPATH} in a worker's
            # env_vars to what the node's worker had, so the base's own path stays behind the layer.
            env["PYTHONPATH"] = os.pathsep.join((self.layer_path, env.get("PYTHONPATH") or "${PYTHONPATH}"))
        return env

    def _ship_modules(self, job: PythonJob) -> bool:
        choice = str(job.conf.get("shipModules", "auto")).lower()
        if choice in ("true", "false"):
            return choice == "true"
        return bool(self.cluster.external_address)  # our own head runs this very installation

    def _worker_for(self, job: PythonJob) -> WorkerProcess:
        python_env = job.env.get("PYTHON_ENV", "")
        python_exec = job.conf.get("pythonExec") or sys.executable
        env_pairs = tuple(sorted((k, str(v)) for k, v in job.env.items() if k != "PYTHON_ENV"))
        key = (python_env, python_exec, env_pairs, self.layer_path)
        with self._lock:
            worker = self._worker
        if worker is not None:
            worker.discard_pending()  # between cells: nobody's output (and whether it has died)
            if worker.key == key and worker.alive():
                return worker
        if worker is not None:
            worker.stop()
        env = {**os.environ, **RAY_ENV, "TF_USE_LEGACY_KERAS": "1", "PYTHONUNBUFFERED": "1", **self.user_env}
        env.update(dict(env_pairs))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), self.layer_path, env.get("PYTHONPATH", "")) if p)
        env.pop("RAY_ADDRESS", None)
        if self.cluster.external_address and "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in job.env:
            # loopback-only mode is for our own head; a real cluster needs Ray's normal addressing
            env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
        worker = WorkerProcess(key, python_env, python_exec, env, os.getcwd())
        with self._lock:
            self._worker = worker
        try:
            worker.wait_ready(READY_TIMEOUT)
        except PythonCellError:
            with self._lock:
                self._worker = None
            raise
        return worker

    def _loop(self, worker: WorkerProcess, job_id: str) -> str | None:
        """Take the worker's items until the job's CellDone; raise if the cell failed or the worker died."""
        foreign = 0  # output of an earlier cell's threads, kept out of this run
        sent_again = 0  # SIGINTs sent after the first (INTERRUPT_AGAIN)
        while True:
            if worker.gone():
                self._died(worker)
            wait = None
            if self._interrupted_at is not None:
                since = time.monotonic() - self._interrupted_at
                if since >= INTERRUPT_GRACE:
                    self._discard(worker)
                    raise PythonCellError("interrupted", f"interrupted: the worker did not stop within "
                                                         f"{INTERRUPT_GRACE:.0f} s and was killed")
                if since >= INTERRUPT_AGAIN * (sent_again + 1):
                    sent_again += 1
                    _sigint(worker)
                wait = min(INTERRUPT_GRACE - since, INTERRUPT_AGAIN * (sent_again + 1) - since)
            item = worker.take(wait)
            if isinstance(item, FdLine):
                self._emit_fd(item)
            elif isinstance(item, NeedCluster):  # whichever job asks: it waits for the answer
                try:
                    self._used_cluster = True
                    worker.send(ClusterFound(info=self.cluster.ensure()))
                except Exception as exc:  # the cell sees this as its own error
                    worker.send(ClusterUnavailable(message=str(exc)))
            elif isinstance(item, CellOutput) and item.job_id and item.job_id != job_id:
                # A thread an earlier cell started (maybe another runner's, in a shared session)
                # still prints: its lines are its own run's, never this one's. Said once, here.
                if not foreign:
                    self.emit(Output(text="[console] a thread started by an earlier run is still printing; "
                                               "its lines are not shown in this run\n", source="driver",
                                          stream="system"))
                foreign += 1
            elif not isinstance(item, (CellOutput, CellMetrics, CellRayUsage, CellDone)) or item.job_id != job_id:
                continue  # bookkeeping (take() kept it), a wake-up, or an earlier cell's late output
            elif isinstance(item, CellRayUsage):
                self.emit(item)  # the kernel sends it on as the run's (console/kernel/main.py)
            elif isinstance(item, CellOutput):
                self.emit(Output(text=item.text, source=item.source, stream=item.stream))
            elif isinstance(item, CellMetrics):
                self.emit(Metrics(values=item.values, source=item.source, step=item.step, ts=time.time()))
            else:
                for line in worker.lines_to_mark(job_id, item.marked, MARK_TIMEOUT):
                    self._emit_fd(line)
                if item.error is not None:
                    from console.cluster.limits import note  # a fork refused by the session's process limit

                    limit = note()
                    raise PythonCellError(item.error.kind, item.error.message + (f" ({limit})" if limit else ""),
                                          item.error.line, item.error.traceback)
                return item.result_path

    def _died(self, worker: WorkerProcess) -> NoReturn:
        """The worker's socket ended: report how it died, with what it wrote on its way out."""
        code = worker.exit_code(5.0)
        worker.kill()  # what is left of its process group, so that both pipes end
        for line in worker.last_lines():
            self._emit_fd(line)
        self._discard(worker)
        if worker.violation:
            raise PythonCellError("worker", worker.violation)
        if self._interrupted_at is not None:
            raise PythonCellError("interrupted", "interrupted: " + death_message(code))
        raise PythonCellError("worker", death_message(code))

    def _emit_fd(self, line: FdLine) -> None:
        self.emit(Output(text=line.text, source="driver", stream=stream_of(line.stream, line.text)))

    def _discard(self, worker: WorkerProcess) -> None:
        worker.kill()
        worker.close()
        with self._lock:
            if self._worker is worker:
                self._worker = None


def _sigint(worker: WorkerProcess) -> None:
    try:
        os.kill(worker.proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
