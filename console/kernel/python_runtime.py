"""PythonRuntime: the kernel's side of Python cells: worker processes, hand-off, events, errors.

Protocol on the worker's socket pair (pickled tuples):
  worker -> kernel: ("ready", pid, version) · ("out", job, source, stream, text)
                    ("metrics", job, values, source, step) · ("need_cluster", job)
                    ("done", job, result_path | None, error dict | None)
  kernel -> worker: ("run", job, spec) · ("cluster", info) · ("cluster_error", msg) · ("exit",)
Tables travel as Arrow IPC files on /dev/shm where there is one: the input and model tables are
kept while the kernel's table object lives (ipcfiles.py), the output goes in a per-job folder.
"""
from __future__ import annotations

import os
import queue
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable

from console.messages import MetricsEvent, OutputEvent
from console.actors.capture import stream_of
from console.cluster.head import RAY_ENV, RayCluster, stop_process_group
from console.kernel.ipcfiles import IpcFiles, scratch_dir
from console.kernel.job import PythonCellError, PythonJob

Emit = Callable[[Any], None]
INTERRUPT_GRACE = 10.0  # seconds between SIGINT and SIGKILL
READY_TIMEOUT = 120.0  # PYTHON_ENV may activate a slow conda env
_ROOT = Path(__file__).resolve().parents[2]  # the folder holding console/ and pyjava/


class _Worker:
    """One worker process and its channel; fd-level output goes through a queue to the run loop."""

    def __init__(self, key: tuple, python_env: str, python_exec: str, env: dict[str, str], cwd: str) -> None:
        self.key = key
        parent, child = socket.socketpair()
        cmd = f"exec {shlex.quote(python_exec)} -m console.worker.main {child.fileno()}"
        if python_env.strip():
            cmd = f"{python_env} && {cmd}"
        self.proc = subprocess.Popen(["bash", "-c", cmd], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     pass_fds=(child.fileno(),), start_new_session=True)
        child.close()
        self.conn = Connection(parent.detach())
        self.fd_output: "queue.Queue[tuple[str, str]]" = queue.Queue()
        self.startup: list[str] = []
        self.ready = False
        for stream, pipe in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            threading.Thread(target=self._pump, args=(stream, pipe), daemon=True,
                             name=f"worker-{stream}").start()

    def _pump(self, stream: str, pipe: Any) -> None:
        # Output written below Python (C libraries, subprocesses) reaches us here, not via the channel.
        for raw in iter(pipe.readline, b""):
            text = raw.decode("utf-8", "replace")
            if not self.ready:
                self.startup.append(text)
            self.fd_output.put((stream, text))
        pipe.close()

    def wait_ready(self, timeout: float) -> None:
        if self.conn.poll(timeout):
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                msg = None
            if msg and msg[0] == "ready":
                self.ready = True
                return
        code = self._exit_code(5.0)
        self.kill()
        time.sleep(0.1)  # let the pumps collect the shell's last words
        err = "".join(self.startup).strip() or "(no output)"
        why = f"exit code {code}" if code is not None else f"no answer within {timeout:.0f} s"
        raise PythonCellError("env", f"the Python worker did not start ({why}); PYTHON_ENV or pythonExec "
                                     f"failed:\n{err}")

    def _exit_code(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(("exit",))
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
        if self.alive():
            stop_process_group(self.proc.pid, grace=3.0)
        self.conn.close()


def death_message(code: int | None) -> str:
    if code is None:
        return "the Python worker stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (killed: out of memory?)" if -code == signal.SIGKILL else ""
        return f"the Python worker died: killed by {name}{hint}"
    return f"the Python worker died: exit code {code}"


class PythonRuntime:
    """Runs PythonJobs in reusable worker processes on the notebook's Ray cluster.

    emit(OutputEvent | MetricsEvent) is called only from the thread that called run().
    interrupt() may be called from any thread.
    """

    def __init__(self, cfg: Any, emit: Emit, cluster: RayCluster | None = None) -> None:
        self.cfg = cfg
        self.emit = emit
        self.cluster = cluster or RayCluster(cfg)
        self._worker: _Worker | None = None
        self._lock = threading.Lock()
        self._interrupted_at: float | None = None
        self._running = False
        self._used_cluster = False
        self._scratch = scratch_dir()
        self._tables = IpcFiles(self._scratch)

    # ---- public
    def run(self, job: PythonJob) -> "Any":
        """Run the job; return its output table (pyarrow.Table) or None. Raises PythonCellError."""
        import pyarrow as pa

        job_dir = self._scratch / uuid.uuid4().hex[:12]
        job_dir.mkdir()
        try:
            spec = self._spec(job, job_dir)
            with self._lock:
                self._interrupted_at = None
                self._running = True
            worker = self._worker_for(job)
            while not worker.fd_output.empty():  # between cells: nobody's output
                worker.fd_output.get_nowait()
            job_id = uuid.uuid4().hex
            worker.conn.send(("run", job_id, spec))
            result_path = self._loop(worker, job_id)
            if result_path is None:
                return None
            with pa.memory_map(result_path) as src:
                table = pa.ipc.open_file(src).read_all()
            return table.combine_chunks() if table.num_rows else table  # copied out of the job folder
        finally:
            with self._lock:
                self._running = False
            shutil.rmtree(job_dir, ignore_errors=True)

    def interrupt(self) -> None:
        """KeyboardInterrupt in the running cell; the worker is killed if it is still busy after the grace."""
        with self._lock:
            if not self._running:
                return
            if self._interrupted_at is None:
                self._interrupted_at = time.monotonic()
            worker = self._worker
        if worker is not None and worker.alive():
            try:
                os.kill(worker.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass

    def shutdown(self, stop_cluster: bool = False) -> None:
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
        elif self._used_cluster:
            self.cluster.release()

    # ---- internals
    def _spec(self, job: PythonJob, job_dir: Path) -> dict[str, Any]:
        spec: dict[str, Any] = {"code": job.code, "code_line": job.code_line, "conf": dict(job.conf),
                                "num_partitions": job.num_partitions, "output_path": str(job_dir / "output.arrow"),
                                "default_partitions": self.cfg.get("RAY_NUM_CPUS") or os.cpu_count(),
                                "actor_env": self._actor_env(job),
                                "ship_modules": self._ship_modules(job)}
        spec["conf"].setdefault("pythonMode", "ray")
        spec["conf"].setdefault("timezone", "UTC")
        if job.input_table is not None:
            spec["input_path"] = self._tables.path_for(job.input_table, job_dir, "input.arrow")
        if job.model_table is not None:
            spec["model_path"] = self._tables.path_for(job.model_table, job_dir, "model.arrow")
        return spec

    def _actor_env(self, job: PythonJob) -> dict[str, str]:
        env = {k: v for k, v in RAY_ENV.items() if k.startswith("TF_")}
        env["TF_USE_LEGACY_KERAS"] = "1"
        env.update({k: str(v) for k, v in job.env.items() if k != "PYTHON_ENV"})
        return env

    def _ship_modules(self, job: PythonJob) -> bool:
        choice = str(job.conf.get("shipModules", "auto")).lower()
        if choice in ("true", "false"):
            return choice == "true"
        return bool(self.cluster.external_address)  # our own head runs this very installation

    def _worker_for(self, job: PythonJob) -> _Worker:
        python_env = job.env.get("PYTHON_ENV", "")
        python_exec = job.conf.get("pythonExec") or sys.executable
        env_pairs = tuple(sorted((k, str(v)) for k, v in job.env.items() if k != "PYTHON_ENV"))
        key = (python_env, python_exec, env_pairs)
        with self._lock:
            worker = self._worker
        if worker is not None and worker.key == key and worker.alive():
            return worker
        if worker is not None:
            worker.stop()
        env = {**os.environ, **RAY_ENV, "TF_USE_LEGACY_KERAS": "1", "PYTHONUNBUFFERED": "1"}
        env.update(dict(env_pairs))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
        env.pop("RAY_ADDRESS", None)
        if self.cluster.external_address and "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in job.env:
            # loopback-only mode is for our own head; a real cluster needs Ray's normal addressing
            env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
        worker = _Worker(key, python_env, python_exec, env, os.getcwd())
        with self._lock:
            self._worker = worker
        try:
            worker.wait_ready(READY_TIMEOUT)
        except PythonCellError:
            with self._lock:
                self._worker = None
            raise
        return worker

    def _loop(self, worker: _Worker, job_id: str) -> str | None:
        while True:
            self._drain_fd_output(worker)
            if self._interrupted_at is not None and time.monotonic() - self._interrupted_at > INTERRUPT_GRACE:
                self._discard(worker)
                raise PythonCellError("interrupted", f"interrupted: the worker did not stop within "
                                                     f"{INTERRUPT_GRACE:.0f} s and was killed")
            try:
                if not worker.conn.poll(0.05):
                    if not worker.alive():
                        raise EOFError
                    continue
                msg = worker.conn.recv()
            except (EOFError, OSError):
                code = worker._exit_code(5.0)
                time.sleep(0.1)
                self._drain_fd_output(worker)
                self._discard(worker)
                if self._interrupted_at is not None:
                    raise PythonCellError("interrupted", "interrupted: " + death_message(code)) from None
                raise PythonCellError("worker", death_message(code)) from None
            kind, mjob = msg[0], msg[1] if len(msg) > 1 else None
            if mjob != job_id and kind != "need_cluster":
                continue  # output of an earlier cell that arrived late
            if kind == "out":
                self.emit(OutputEvent(text=msg[4], source=msg[2], stream=msg[3]))
            elif kind == "metrics":
                self.emit(MetricsEvent(values=msg[2], source=msg[3], step=msg[4], ts=time.time()))
            elif kind == "need_cluster":
                try:
                    self._used_cluster = True
                    worker.conn.send(("cluster", self.cluster.ensure().to_json()))
                except Exception as exc:  # the cell sees this as its own error
                    worker.conn.send(("cluster_error", str(exc)))
            elif kind == "done":
                time.sleep(0.02)
                self._drain_fd_output(worker)
                error = msg[3]
                if error:
                    raise PythonCellError(error["kind"], error["message"], error.get("line"),
                                          error.get("traceback", ""))
                return msg[2]

    def _drain_fd_output(self, worker: _Worker) -> None:
        while True:
            try:
                stream, text = worker.fd_output.get_nowait()
            except queue.Empty:
                return
            self.emit(OutputEvent(text=text, source="driver", stream=stream_of(stream, text)))

    def _discard(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            if self._worker is worker:
                self._worker = None
