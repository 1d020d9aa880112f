"""The kernel process: `python -m console.kernel.main`, one per (user, notebook) session.

It owns an engine.Session (tables, conf, variables) and talks to the web process over two
dedicated pipes of JSON lines (to_wire dicts of console.messages): commands in, events out.
Its stdout/stderr are left to libraries that write there; the web process reads them as
"system" output. Commands are read on a thread, so an interrupt reaches a running cell; cells
run one at a time on the main thread, in the order they came.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import sys
import threading
import time
import traceback
from typing import IO, Any

from console.config import Config, load_config
from console.server.kernel_process import CONFIG_ENV
from console.messages import CellStatusEvent, ErrorEvent, ExecuteCommand, InterruptCommand, KernelStatusEvent, Message, MetricsEvent, OutputEvent, from_wire

# "module:Class" of another engine with engine.Session's interface (tests plug a scripted one).
ENGINE_ENV = "CONSOLE_KERNEL_ENGINE"


def engine_class() -> Any:
    spec = os.environ.get(ENGINE_ENV)
    if not spec:
        from console.kernel.session import Session# heavy (duckdb, pyarrow): only in the kernel process

        return Session
    import importlib

    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


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


class Kernel:
    def __init__(self, cfg: Config, out: EventWriter, notebook_id: str, session_id: str) -> None:
        self.out = out
        self.notebook_id = notebook_id
        self.current: ExecuteCommand | None = None
        self.last: ExecuteCommand | None = None
        self.commands: queue.Queue[ExecuteCommand | None] = queue.Queue()
        self.session: Any = engine_class()(cfg, self.emit, session_id=session_id,
                                           notebook_loader=self._load_notebook(cfg))

    @staticmethod
    def _load_notebook(cfg: Config) -> Any:
        """`include notebook.`name`` reads other notebooks straight from the store."""
        store: list[Any] = []

        def load(name: str) -> list[tuple[str, str]]:
            if not store:
                from console.store import Store

                store.append(Store(cfg.database_url, run_migrations=False))
            found = store[0].find_notebooks(name=name)
            if not found:
                raise LookupError(f"no notebook named {name!r}")
            nb = store[0].get_notebook(found[0].id)
            return [(c.kind, c.source) for c in nb.cells]

        return load

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
                print(f"kernel: bad command: {exc}", file=sys.stderr)
                continue
            if isinstance(msg, ExecuteCommand):
                self.commands.put(msg)
            elif isinstance(msg, InterruptCommand):
                self.interrupt()
        self.commands.put(None)  # the web process closed the pipe: shut down

    def interrupt(self) -> None:
        """Stop the running cell, or the one sent but not yet started."""
        if self.current is not None:
            self.session.interrupt()
            return
        while True:
            try:
                cmd = self.commands.get_nowait()
            except queue.Empty:
                return
            if cmd is None:
                self.commands.put(None)
                return
            ids = {"notebook_id": cmd.notebook_id, "cell_id": cmd.cell_id, "run_id": cmd.run_id}
            self.out.send(ErrorEvent(kind="interrupted", message="interrupted before it started", **ids))
            self.out.send(CellStatusEvent(status="interrupted", elapsed_ms=0, **ids))

    def serve(self) -> None:
        self.out.send(KernelStatusEvent(self.notebook_id, "idle"))
        while (cmd := self.commands.get()) is not None:
            self.execute(cmd)
        self.shutdown()

    def execute(self, cmd: ExecuteCommand) -> None:
        ids = {"notebook_id": cmd.notebook_id, "cell_id": cmd.cell_id, "run_id": cmd.run_id}
        self.current = cmd
        self.out.send(CellStatusEvent(status="running", **ids))
        started = time.monotonic()
        status = "done"
        try:
            outcome = self.session.run_cell(cmd.source, cmd.kind, cell=cmd.cell_id)
            if outcome.result is not None:
                self.out.send(dataclasses.replace(outcome.result, **ids))
            if outcome.error is not None:
                self.out.send(dataclasses.replace(outcome.error, **ids))
                status = "interrupted" if outcome.error.kind == "interrupted" else "error"
            elif not outcome.ok:
                status = "error"
        except BaseException as exc:  # noqa: BLE001 - a kernel bug is reported on the cell, not fatal
            if isinstance(exc, SystemExit):
                raise
            status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "error"
            self.out.send(ErrorEvent(
                kind="interrupted" if status == "interrupted" else "kernel",
                message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(), **ids))
        finally:
            self.last, self.current = cmd, None
        elapsed = int((time.monotonic() - started) * 1000)
        self.out.send(CellStatusEvent(status=status, elapsed_ms=elapsed, **ids))  # type: ignore[arg-type]

    def shutdown(self) -> None:
        for target in (self.session, getattr(self.session, "runtime", None)):
            stop = getattr(target, "shutdown", None) or getattr(target, "close", None)
            if callable(stop):
                try:
                    stop()
                except Exception:  # noqa: BLE001 - best effort on the way out
                    traceback.print_exc()
                return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m console.kernel.main")
    parser.add_argument("--cmd-fd", type=int, required=True)
    parser.add_argument("--event-fd", type=int, required=True)
    parser.add_argument("--notebook-id", required=True)
    parser.add_argument("--session-id", required=True)
    args = parser.parse_args(argv)
    cfg = load_config(json.loads(os.environ.get(CONFIG_ENV, "{}")))
    out = EventWriter(os.fdopen(args.event_fd, "wb", buffering=0))
    commands = os.fdopen(args.cmd_fd, "rb")
    kernel = Kernel(cfg, out, args.notebook_id, args.session_id)
    threading.Thread(target=kernel.read_commands, args=(commands,), name="kernel-commands", daemon=True).start()
    kernel.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
