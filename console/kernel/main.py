"""The kernel process: `python -m console.kernel.main`, one per (user, notebook) session.

It owns an engine (console.kernel.session.Session, or the one a test injects through
`main(engine_factory=...)`) and talks to the web process over one Channel on two dedicated
pipes (console/wire/kernel.py): commands in, events out. It speaks only of the run the server
told it to execute, by that run's id; the server stamps what it accepts with its own notebook
and cell ids. Its stdout/stderr are left to libraries that write there; the web process reads
them as "system" output. Its own log (the `console` loggers) travels as kernel_log events into
the server's log, never to a viewer. Commands are read on a thread, so an interrupt reaches a
running cell; cells run one at a time on the main thread, in the order they came.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import queue
import sys
import threading
import time
from collections.abc import Mapping

from console.wire import environment as envspec
from console.cluster.head import RayCluster
from console.cluster.head_link import HeadLink
from console.config import KERNEL_CONFIG_ENV, Config, load_config
from console.ids import NotebookId, SessionId
from console.kernel.errors import internal_error
from console.kernel.session import Session
from console.protocols import Engine, EngineFactory
from console.wire.cell import Failure, Metrics, Output
from console.wire.channel import TRUSTED_LINE_CAP, Channel, ProtocolError, new_request_id
from console.wire.codec import Message, fit
from console.wire.kernel import (TO_KERNEL, EnvironmentBuild, EnvironmentBuilt, EnvironmentChanged, ExecuteCommand,
                                 KernelAnswer, KernelInterrupt, KernelLogEvent, KernelQuery, KernelReady, NotebookCells,
                                 NotebookRequest, RunEnd, RunEnded, RunError, RunManifest, RunMetrics, RunOutput,
                                 RunRayUsage, RunResult, RunStarted)
from console.wire.worker import CellRayUsage

log = logging.getLogger(__name__)


def finite(values: Mapping[str, object]) -> dict[str, float]:
    """The values that are finite numbers (the server refuses the others)."""
    out: dict[str, float] = {}
    for name, value in values.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out[str(name)[:1024]] = float(value)
    return dict(list(out.items())[:1000])


class ServerLink:
    """The kernel's end of its channel to the server; a send that fails means the server is gone."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def send(self, msg: Message) -> None:
        if not self.channel.send(msg):
            os._exit(3)  # the web process is gone: nobody is left to serve, so stop at once


class PipeLogHandler(logging.Handler):
    """The kernel's log records as kernel_log events: the server writes them to its own log."""

    def __init__(self, out: ServerLink) -> None:
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

    Called on the cell's thread; the answer arrives on the command thread (Channel.messages).
    """

    def __init__(self, channel: Channel, timeout: float = 60.0) -> None:
        self.channel = channel
        self.timeout = timeout

    def __call__(self, name: str) -> list[tuple[str, str]]:
        try:
            answer = self.channel.request(NotebookRequest(new_request_id(), name), NotebookCells, self.timeout)
        except TimeoutError:
            raise LookupError(f"the server did not send notebook {name!r} within {self.timeout:.0f} s") from None
        except ConnectionError as exc:
            raise LookupError(str(exc)) from None
        if answer.error:
            raise LookupError(answer.error)
        return [(kind, source) for kind, source in answer.cells]


class PipeLayerServer:
    """Behind the sandbox: the server builds and seals a lock's layer (console/server/sessions/env_builds.py),
    which this kernel, running a member's code, could not make safe to share."""

    def __init__(self, channel: Channel, timeout: float) -> None:
        self.channel = channel
        self.timeout = timeout

    def __call__(self, lock: str) -> str:
        from console.kernel.envs import EnvError

        try:
            answer = self.channel.request(EnvironmentBuild(new_request_id(), lock), EnvironmentBuilt, self.timeout)
        except TimeoutError:
            raise EnvError(f"the server did not build the environment within {self.timeout:.0f} s") from None
        except ConnectionError as exc:
            raise EnvError(str(exc)) from None
        if answer.error:
            raise EnvError(answer.error)
        return answer.lock_hash


class Kernel:
    def __init__(self, cfg: Config, channel: Channel, notebook_id: NotebookId, session_id: SessionId,
                 engine_factory: EngineFactory) -> None:
        self.channel = channel
        self.out = ServerLink(channel)
        self.notebook_id = notebook_id
        self.current: ExecuteCommand | None = None
        self.starting = threading.Lock()  # a cell becoming current, against an interrupt
        self.last: ExecuteCommand | None = None
        self.commands: queue.Queue[ExecuteCommand | None] = queue.Queue()
        self.notebooks = PipeNotebookLoader(channel)
        # The kernel's Ray cluster asks this server for the head over the socket it was handed.
        cluster = RayCluster(cfg, head=HeadLink.from_env())
        self.engine: Engine = engine_factory(cfg, self.emit, session_id=session_id, notebook_loader=self.notebooks,
                                             cluster=cluster)

    def emit(self, msg: object) -> None:
        """Output of the engine/runtime, sent as the running run's (late lines: the last run's)."""
        cmd = self.current or self.last
        if cmd is None:
            return
        if isinstance(msg, Output):
            self.out.send(RunOutput(cmd.run_id, msg.text, msg.source[:1024], msg.stream))  # type: ignore[arg-type]
        elif isinstance(msg, Metrics):
            values = finite(msg.values)
            if values:  # a NaN loss is not a point the chart can draw
                self.out.send(RunMetrics(cmd.run_id, values, msg.source[:1024], msg.step, msg.ts or time.time()))
        elif isinstance(msg, CellRayUsage) and self.current is not None:  # the running cell's only
            self.out.send(RunRayUsage(self.current.run_id, msg.usage))
        elif isinstance(msg, EnvironmentChanged) and self.current is not None:  # %pip of the running cell
            self.out.send(dataclasses.replace(msg, run_id=self.current.run_id))

    def read_commands(self) -> None:
        try:
            for msg in self.channel.messages():
                if isinstance(msg, ExecuteCommand):
                    self.commands.put(msg)
                elif isinstance(msg, KernelInterrupt):
                    self.interrupt()
                elif isinstance(msg, KernelQuery):
                    self.out.send(self.answer(msg))
        except ProtocolError as exc:  # the server never sends one; stop rather than guess
            why = f"the server's command pipe broke the protocol: {exc}"
        else:
            error = self.channel.read_error
            why = f"reading the server's commands failed: {error}" if error else "the server closed its command pipe"
        log.warning("%s; the kernel stops", why)  # into the server's log (not stderr: a cell's output)
        self.commands.put(None)  # shut down

    def answer(self, query: KernelQuery) -> KernelAnswer:
        """Answer on the command thread: queries read the session, they do not wait for a cell."""
        try:
            return KernelAnswer(query.request_id, data=fit(self.engine.query(query.what, query.args)))
        except (LookupError, ValueError) as exc:
            return KernelAnswer(query.request_id, error=str(exc.args[0]) if exc.args else str(exc),
                                bad_request=isinstance(exc, ValueError))
        except Exception as exc:  # a fault of ours: logged under an id, which is all the asker sees
            return KernelAnswer(query.request_id, error=internal_error(exc, f"query {query.what}").message)

    def interrupt(self) -> None:
        """Stop the running cell, or the one sent but not yet started."""
        with self.starting:
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
            self.out.send(RunError(cmd.run_id, kind="interrupted", message="interrupted before it started"))
            self.out.send(RunEnded(cmd.run_id, "interrupted", 0))

    def serve(self) -> None:
        self.out.send(KernelReady())
        while (cmd := self.commands.get()) is not None:
            self.execute(cmd)
        self.shutdown()

    def execute(self, cmd: ExecuteCommand) -> None:
        # The engine forgets an earlier cell's interrupt before this cell is current, never after:
        # an interrupt sent once the server showed the cell running was lost when run_cell reset
        # it (a fresh-clone run: a 60 s sleep ran to its end). One lock with interrupt().
        with self.starting:
            self.engine.prepare_cell()
            self.current = cmd
        self.out.send(RunStarted(cmd.run_id))
        started = time.monotonic()
        status: RunEnd = "done"
        error: Failure | None = None
        try:
            if hasattr(self.engine, "replay"):  # a replay reads what the recorded run read (kernel/replay.py)
                self.engine.replay = cmd.replay
            outcome = self.engine.run_cell(cmd.source, cmd.kind, cell=cmd.cell_id, run_id=cmd.run_id)
            # Before the end: the server keeps it for its current run only.
            if outcome.io or outcome.io_dropped or outcome.lock_hash:
                self.out.send(RunManifest(cmd.run_id, list(outcome.io), outcome.io_dropped, outcome.lock_hash))
            if outcome.result is not None:
                r = outcome.result
                self.out.send(RunResult(cmd.run_id, r.name[:1024], fit(r.columns), fit(r.rows), r.total_rows))
            error = outcome.error
            if error is None and not outcome.ok:
                status = "error"
        except KeyboardInterrupt:
            error = Failure(kind="interrupted", message="the cell was interrupted")
        except SystemExit:
            raise
        except BaseException as exc:  # a fault of ours is reported on the cell, not fatal
            error = internal_error(exc, f"run {cmd.run_id}")
        finally:
            self.last, self.current = cmd, None
        if error is not None:
            self.out.send(RunError(cmd.run_id, error.kind, error.message, error.line, error.column, error.traceback))
            status = "interrupted" if error.kind == "interrupted" else "error"
        elapsed = int((time.monotonic() - started) * 1000)
        self.out.send(RunEnded(cmd.run_id, status, elapsed))

    def shutdown(self) -> None:
        try:
            self.engine.shutdown()
        except Exception:  # best effort on the way out
            log.exception("the engine's shutdown failed")


def preset_environment(engine: Engine, text: str | None) -> None:
    """Hand the engine the notebook's stored environment (the server's, in START_ENV), so the first
    Python cell runs in its layer without the %pip cell running again."""
    preset = getattr(engine, "preset_environment", None)
    if text is None or preset is None:
        return
    try:
        env = envspec.clean(json.loads(text))
    except (ValueError, envspec.BadEnvironment):
        log.warning("the notebook's environment from the server was not readable; the base is used")
        return
    preset(env)


def main(argv: list[str] | None = None, engine_factory: EngineFactory = Session) -> int:
    parser = argparse.ArgumentParser(prog="python -m console.kernel.main")
    parser.add_argument("--cmd-fd", type=int, required=True)
    parser.add_argument("--event-fd", type=int, required=True)
    parser.add_argument("--notebook-id", required=True)
    parser.add_argument("--session-id", required=True)
    args = parser.parse_args(argv)
    cfg = load_config(json.loads(os.environ.get(KERNEL_CONFIG_ENV, "{}")))
    channel = Channel(TO_KERNEL, read=args.cmd_fd, write=args.event_fd, answers=(NotebookCells, EnvironmentBuilt),
                      line_cap=TRUSTED_LINE_CAP, name="server->kernel")
    own_log = logging.getLogger("console")
    own_log.addHandler(PipeLogHandler(ServerLink(channel)))
    own_log.setLevel(logging.INFO)
    own_log.propagate = False  # not to stderr, where it would show as the running cell's output
    kernel = Kernel(cfg, channel, NotebookId(args.notebook_id), SessionId(args.session_id), engine_factory)
    if hasattr(kernel.engine, "layer_server"):  # a Session: its sandboxed builds go to the server
        kernel.engine.layer_server = PipeLayerServer(channel, float(cfg.PIP_TIMEOUT_SECONDS) + 60)
    preset_environment(kernel.engine, os.environ.pop(envspec.START_ENV, None))
    threading.Thread(target=kernel.read_commands, name="kernel-commands", daemon=True).start()
    kernel.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
