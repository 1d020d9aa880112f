"""The kernel's handle on one cell worker process: its socket, its stdout/stderr, one inbox.

Four threads feed one queue, each in the order its source produced: the socket's reader (the
worker's messages, console/wire/worker.py, checked by a Channel: a worker that breaks the
protocol is killed and its cell fails with the reason), one pump per output pipe
(fd-level output: C libraries, subprocesses, a dying interpreter's last words) and a waiter that
reports the process's exit. The run loop (python_runtime.py) reads only this queue, so nothing
guesses how far another thread has got: it waits for an item that says so, the worker's mark on
both pipes before CellDone, or the end of both pipes after a death, with a deadline only for the
cases where that item can never come (a cell that closed its fd 1, a grandchild holding a pipe).
"""
from __future__ import annotations

import os
import queue
import shlex
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, Callable, Union

from console.cluster.procs import stop_process_group
from console.kernel.job import PythonCellError
from console.wire.channel import Channel, ProtocolError
from console.wire.codec import Message
from console.wire.worker import FD_MARK, FROM_WORKER, WorkerCompletion, WorkerExit, WorkerReady, WorkerVariableList

STREAMS = ("stdout", "stderr")
PIPES_END_TIMEOUT = 5.0  # after a kill: only a process outside the group can hold the pipes longer


@dataclass(frozen=True)
class FdLine:
    """A line (or the part before a mark) the worker's process group wrote on fd 1 or 2."""

    stream: str
    text: str


@dataclass(frozen=True)
class FdMark:
    """fd_mark(job_id) read on a stream: everything the worker wrote there before it is queued."""

    stream: str
    job_id: str


@dataclass(frozen=True)
class FdClosed:
    """A stream's pipe ended: every process that held it is gone."""

    stream: str


@dataclass(frozen=True)
class SocketClosed:
    """The socket ended; every message the worker sent is queued before this."""


@dataclass(frozen=True)
class Exited:
    """The worker process ended (its socket is then hung up so that SocketClosed follows)."""

    code: int


@dataclass(frozen=True)
class Wake:
    """Put by interrupt() so that the run loop recomputes its deadline."""


Item = Union[Message, FdLine, FdMark, FdClosed, SocketClosed, Exited, Wake]


class WorkerProcess:
    """One worker process (`python -m console.worker.main FD` through PYTHON_ENV) and its inbox.

    Items are taken by one thread only (take()); it also keeps what they say: which streams and
    pipes have ended and the last mark read on each stream.
    """

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
        self.sock = parent
        self.channel = Channel(FROM_WORKER, read=parent.fileno(), write=parent.fileno(),
                               answers=(WorkerCompletion, WorkerVariableList), name=f"worker {self.proc.pid}")
        self.violation = ""  # how the worker broke the protocol, if it did: why it was killed
        self.inbox: "queue.Queue[Item]" = queue.Queue()
        self.ended: set[str] = set()  # "socket", "stdout", "stderr" once their end was taken
        self.marks: dict[str, str] = {}  # stream -> job_id of the last mark taken
        self._closing = False
        self._close_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="worker-socket", daemon=True)
        self._reader.start()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for stream, pipe in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            threading.Thread(target=self._pump, args=(stream, pipe), daemon=True, name=f"worker-{stream}").start()
        threading.Thread(target=self._wait, name="worker-exit", daemon=True).start()

    # ---- the threads that fill the inbox
    def _read(self) -> None:
        try:
            for msg in self.channel.messages():
                self.inbox.put(msg)
        except ProtocolError as exc:
            self.violation = f"the Python worker broke the protocol and was stopped ({str(exc)[:200]})"
            self.kill()
        finally:
            self.inbox.put(SocketClosed())

    def _pump(self, stream: str, pipe: IO[bytes]) -> None:
        try:
            for raw in iter(pipe.readline, b""):
                at = raw.find(FD_MARK)
                if at < 0:
                    self.inbox.put(FdLine(stream, raw.decode("utf-8", "replace")))
                    continue
                if at:  # a partial line the cell left before the mark is still its output
                    self.inbox.put(FdLine(stream, raw[:at].decode("utf-8", "replace")))
                self.inbox.put(FdMark(stream, raw[at + len(FD_MARK):].strip().decode("ascii", "replace")))
        finally:
            pipe.close()
            self.inbox.put(FdClosed(stream))

    def _wait(self) -> None:
        self.inbox.put(Exited(self.proc.wait()))

    # ---- the consumer's side
    def take(self, timeout: float | None) -> Item | None:
        """The next item, or None after `timeout` seconds (None: wait as long as it takes)."""
        try:
            item = self.inbox.get(timeout=None if timeout is None else max(0.0, timeout))
        except queue.Empty:
            return None
        if isinstance(item, FdMark):
            self.marks[item.stream] = item.job_id
        elif isinstance(item, FdClosed):
            self.ended.add(item.stream)
        elif isinstance(item, SocketClosed):
            self.ended.add("socket")
        elif isinstance(item, Exited):
            # A child the cell forked may hold the worker's end of the socket: hang up ours. What
            # the worker sent is still read first, then the reader sees the end.
            self._hang_up()
        return item

    def discard_pending(self) -> None:
        """Drop what is queued (output between cells is nobody's), keeping what it says."""
        while self.take(0) is not None:
            pass

    def lines_until(self, done: Callable[[], bool], timeout: float) -> list[FdLine]:
        """Take items until done() or `timeout` seconds; the fd lines among them, in order."""
        deadline = time.monotonic() + timeout
        lines: list[FdLine] = []
        while not done():
            item = self.take(deadline - time.monotonic())
            if item is None:
                break
            if isinstance(item, FdLine):
                lines.append(item)
        return lines

    def lines_to_mark(self, job_id: str, streams: tuple[str, ...], timeout: float) -> list[FdLine]:
        """The fd lines written before the job's marks on `streams` (see CellDone.marked)."""
        return self.lines_until(lambda: all(self.marks.get(s) == job_id or s in self.ended for s in streams),
                                timeout)

    def last_lines(self) -> list[FdLine]:
        """After kill(): the fd lines still on their way, up to the end of both pipes."""
        return self.lines_until(lambda: all(s in self.ended for s in STREAMS), PIPES_END_TIMEOUT)

    def wait_ready(self, timeout: float) -> None:
        """Return once the worker says WorkerReady; if it dies or stays silent, kill it and raise
        an "env" PythonCellError with everything it and its shell (PYTHON_ENV) printed."""
        deadline = time.monotonic() + timeout
        startup: list[str] = []
        while not self.gone():
            item = self.take(deadline - time.monotonic())
            if item is None:
                break
            if isinstance(item, WorkerReady):
                return
            if isinstance(item, FdLine):
                startup.append(item.text)
        code = self.exit_code(5.0)
        self.kill()
        startup += [line.text for line in self.last_lines()]  # the shell's last words
        self.close()
        err = "".join(startup).strip() or "(no output)"
        why = f"exit code {code}" if code is not None else f"no answer within {timeout:.0f} s"
        raise PythonCellError("env", f"the Python worker did not start ({why}); PYTHON_ENV or pythonExec "
                                     f"failed:\n{err}")

    def gone(self) -> bool:
        """The socket ended: the worker will send nothing more."""
        return "socket" in self.ended

    def alive(self) -> bool:
        return self.proc.poll() is None and not self.gone()

    def exit_code(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def send(self, msg: Message) -> None:
        if not self.channel.send(msg):
            raise OSError("the worker's socket is closed")

    def kill(self) -> None:
        """SIGKILL the worker's process group (its subprocesses and forked children too)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.exit_code(5.0)

    def stop(self) -> None:
        """Ask the worker to finish (it ends its Ray job), then make sure it has."""
        try:
            self.send(WorkerExit())
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
        if self.proc.poll() is None:
            stop_process_group(self.proc.pid, grace=3.0)
        self.close()

    def close(self) -> None:
        """Release the socket once its reader has ended (closing it under the reader could hand
        the reader another file that reused the descriptor)."""
        with self._close_lock:
            if self._closing:
                return
            self._closing = True
        self._hang_up()
        self._reader.join(PIPES_END_TIMEOUT)
        with self._close_lock:
            self.channel.close()
            self.sock.close()

    def _hang_up(self) -> None:
        """Shut our end of the socket down: the reader reads what is queued, then sees its end."""
        with self._close_lock:
            if self.sock.fileno() < 0:
                return
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def death_message(code: int | None) -> str:
    if code is None:
        return "the Python worker stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (killed: out of memory?)" if -code == signal.SIGKILL else ""
        if -code == signal.SIGKILL:
            from console.cluster.limits import note  # which of the session's limits, if one was passed

            limit = note()
            hint = f": {limit}" if limit else hint
        return f"the Python worker died: killed by {name}{hint}"
    return f"the Python worker died: exit code {code}"
