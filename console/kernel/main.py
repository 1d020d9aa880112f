"""The kernel process: `python -m console.kernel.main`, one per (user, notebook) session.

It owns an engine (console.kernel.session.Session, or the one a test injects through
`main(engine_factory=...)`) and talks to the web process over two dedicated pipes of JSON lines
(to_wire dicts of console.messages): commands in, events out. Its stdout/stderr are left to
libraries that write there; the web process reads them as "system" output. Its own log (the
`console` loggers) travels as kernel_log events into the server's log, never to a viewer.
Commands are read on a thread, so an interrupt reaches a running cell; cells run one at a time
on the main thread, in the order they came.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import queue
import sys
import threading
import time
import uuid
from typing import IO

from console.config import KERNEL_CONFIG_ENV, Config, load_config
from console.ids import NotebookId, SessionId
from console.kernel.errors import internal_error
from console.kernel.session import Session
from console.messages import (CellState, CellStatusEvent, ErrorEvent, ExecuteCommand, InterruptCommand, KernelAnswer,
                              KernelLogEvent, KernelQuery, KernelStatusEvent, Message, MetricsEvent, NotebookCells,
                              NotebookRequest, OutputEvent, from_wire)
from console.protocols import Engine, EngineFactory

log = logging.getLogger(__name__)


class EventWriter:
    """JSON lines onto the event pipe; one lock, because output comes from many threads."""

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh = fh
        self._lock = threading.Lock()

    def send(self, msg: Message) -> None:
        line = json.dumps(msg.to_wire(), default=str).encode() + b"\n"
        with self._lock:
            try:
                self._fh.write(line)
                self._fh.flush()
            except (BrokenPipeError, ValueError):
                # The web process is gone: nobody is left to serve, so stop at once.
                os._exit(3)


class PipeLogHandler(logging.Handler):
    """The kernel's log records as kernel_log events: the server writes them to its own log."""

    def __init__(self, out: EventWriter) -> None:
        super().__init__(logging.INFO)
        self.out = out
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.out.send(KernelLogEvent(record.levelno, self.format(record)))
        except Exception:  # logging must never take the kernel down
            self.handleError(record)


class PipeNotebookLoader:
    """`include notebook.`name``: the cells come from the server, which reads its store, over the pipes.

    Called on the cell's thread; the answer arrives on the command thread (deliver).
    """

    def __init__(self, out: EventWriter, timeout: float = 60.0) -> None:
        self.out = out
        self.timeout = timeout
        self._answers: dict[str, NotebookCells] = {}
        self._cond = threading.Condition()

    def __call__(self, name: str) -> list[tuple[str, str]]:
        request_id = uuid.uuid4().hex
        self.out.send(NotebookRequest(request_id, name))
        with self._cond:
            if not self._cond.wait_for(lambda: request_id in self._answers, self.timeout):
                raise LookupError(f"the server did not send notebook {name!r} within {self.timeout:.0f} s")
            answer = self._answers.pop(request_id)
        if answer.error:
            raise LookupError(answer.error)
        return [(kind, source) for kind, source in answer.cells]

    def deliver(self, answer: NotebookCells) -> None:
        with self._cond:
            self._answers[answer.request_id] = answer
            self._cond.notify_all()


class Kernel:
    def __init__(self, cfg: Config, out: EventWriter, notebook_id: NotebookId, session_id: SessionId,
                 engine_factory: EngineFactory) -> None:
        self.out = out
        self.notebook_id = notebook_id
        self.current: ExecuteCommand | None = None
        self.last: ExecuteCommand | None = None
        self.commands: queue.Queue[ExecuteCommand | None] = queue.Queue()
        self.notebooks = PipeNotebookLoader(out)
        self.engine: Engine = engine_factory(cfg, self.emit, session_id=session_id, notebook_loader=self.notebooks)

    def emit(self, msg: Message) -> None:
        """Stamp output of the engine/runtime with the run it belongs to, then send it."""
        if isinstance(msg, (OutputEvent, MetricsEvent)) and not msg.run_id:
            # Late lines (an actor's last print after the cell returned) go to the last run.
            cmd = self.current or self.last
            if cmd is None:
                return
            msg = dataclasses.replace(msg, notebook_id=cmd.notebook_id, cell_id=cmd.cell_id, run_id=cmd.run_id)
        self.out.send(msg)

    def read_commands(self, fh: IO[bytes]) -> None:
        for line in fh:
            try:
                msg = from_wire(json.loads(line))
            except ValueError as exc:
                log.warning("bad command: %s", exc)
                continue
            if isinstance(msg, ExecuteCommand):
                self.commands.put(msg)
            elif isinstance(msg, InterruptCommand):
                self.interrupt()
            elif isinstance(msg, NotebookCells):
                self.notebooks.deliver(msg)
            elif isinstance(msg, KernelQuery):
                self.out.send(self.answer(msg))
        self.commands.put(None)  # the web process closed the pipe: shut down

    def answer(self, query: KernelQuery) -> KernelAnswer:
        """Answer on the command thread: queries read the session, they do not wait for a cell."""
        try:
            return KernelAnswer(query.request_id, data=self.engine.query(query.what, query.args))
        except (LookupError, ValueError) as exc:
            return KernelAnswer(query.request_id, error=str(exc.args[0]) if exc.args else str(exc),
                                bad_request=isinstance(exc, ValueError))
        except Exception as exc:  # a fault of ours: logged under an id, which is all the asker sees
            return KernelAnswer(query.request_id, error=internal_error(exc, f"query {query.what}").message)

    def interrupt(self) -> None:
        """Stop the running cell, or the one sent but not yet started."""
        if self.current is not None:
            self.engine.interrupt()
            return
        while True:
            try:
                cmd = self.commands.get_nowait()
            except queue.Empty:
                return
            if cmd is None:
                self.commands.put(None)
                return
            self.out.send(ErrorEvent(kind="interrupted", message="interrupted before it started",
                                     notebook_id=cmd.notebook_id, cell_id=cmd.cell_id, run_id=cmd.run_id))
            self.out.send(CellStatusEvent(cmd.notebook_id, cmd.cell_id, cmd.run_id, "interrupted", 0))

    def serve(self) -> None:
        self.out.send(KernelStatusEvent(self.notebook_id, "idle"))
        while (cmd := self.commands.get()) is not None:
            self.execute(cmd)
        self.shutdown()

    def execute(self, cmd: ExecuteCommand) -> None:
        self.current = cmd
        self.out.send(CellStatusEvent(cmd.notebook_id, cmd.cell_id, cmd.run_id, "running"))
        started = time.monotonic()
        status: CellState = "done"
        error: ErrorEvent | None = None
        try:
            outcome = self.engine.run_cell(cmd.source, cmd.kind, cell=cmd.cell_id)
            if outcome.result is not None:
                self.out.send(dataclasses.replace(outcome.result, notebook_id=cmd.notebook_id,
                                                  cell_id=cmd.cell_id, run_id=cmd.run_id))
            error = outcome.error
            if error is None and not outcome.ok:
                status = "error"
        except KeyboardInterrupt:
            error = ErrorEvent(kind="interrupted", message="the cell was interrupted")
        except SystemExit:
            raise
        except BaseException as exc:  # a fault of ours is reported on the cell, not fatal
            error = internal_error(exc, f"run {cmd.run_id}")
        finally:
            self.last, self.current = cmd, None
        if error is not None:
            self.out.send(dataclasses.replace(error, notebook_id=cmd.notebook_id, cell_id=cmd.cell_id,
                                              run_id=cmd.run_id))
            status = "interrupted" if error.kind == "interrupted" else "error"
        elapsed = int((time.monotonic() - started) * 1000)
        self.out.send(CellStatusEvent(cmd.notebook_id, cmd.cell_id, cmd.run_id, status, elapsed))

    def shutdown(self) -> None:
        try:
            self.engine.shutdown()
        except Exception:  # best effort on the way out
            log.exception("the engine's shutdown failed")


def main(argv: list[str] | None = None, engine_factory: EngineFactory = Session) -> int:
    parser = argparse.ArgumentParser(prog="python -m console.kernel.main")
    parser.add_argument("--cmd-fd", type=int, required=True)
    parser.add_argument("--event-fd", type=int, required=True)
    parser.add_argument("--notebook-id", required=True)
    parser.add_argument("--session-id", required=True)
    args = parser.parse_args(argv)
    cfg = load_config(json.loads(os.environ.get(KERNEL_CONFIG_ENV, "{}")))
    out = EventWriter(os.fdopen(args.event_fd, "wb", buffering=0))
    own_log = logging.getLogger("console")
    own_log.addHandler(PipeLogHandler(out))
    own_log.setLevel(logging.INFO)
    own_log.propagate = False  # not to stderr, where it would show as the running cell's output
    commands = os.fdopen(args.cmd_fd, "rb")
    kernel = Kernel(cfg, out, NotebookId(args.notebook_id), SessionId(args.session_id), engine_factory)
    threading.Thread(target=kernel.read_commands, args=(commands,), name="kernel-commands", daemon=True).start()
    kernel.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
