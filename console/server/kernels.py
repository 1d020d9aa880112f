"""SessionManager: one kernel process per (user, notebook), each with a run queue; the one owner of both.

A run is stored (status queued) before it is queued, so a viewer that joins sees it at once.
A session sends one ExecuteCommand at a time and the next when the kernel reports the cell's end;
interrupt cancels the queue and interrupts the running cell; a dying kernel fails its running
cell with the reason, cancels the queue and is announced as dead, and nothing else is touched.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from console.config import Config
from console.ids import CellId, NotebookId, RunId, SessionId, UserId
from console.messages import (CellState, CellStatusEvent, ErrorEvent, ExecuteCommand, InterruptCommand, KernelAnswer,
                              KernelLogEvent, KernelQuery, KernelState, KernelStatusEvent, Message, MetricsEvent,
                              NotebookRequest, OutputEvent, ResultEvent)
from console.outputs import replay
from console.outputs.batcher import NotebookLocks, OutputBatcher
from console.protocols import RunStore
from console.server import includes
from console.server.kernel_process import KERNEL_MODULE, KernelProcess

log = logging.getLogger(__name__)

Broadcast = Callable[[str, list[dict[str, Any]]], None]  # (notebook_id, wire dicts)
RUN_MODES = ("cell", "all", "from")
NOT_STARTED = "not started"


@dataclass
class _Run:
    run_id: RunId
    cell_id: CellId
    source: str
    kind: str
    result: ResultEvent | None = None
    error: ErrorEvent | None = None
    interrupted: bool = False  # the user asked; however the cell then stops, it was interrupted


@dataclass
class KernelSession:
    """What the manager holds for one (user, notebook)."""

    user_id: UserId | None
    notebook_id: NotebookId
    kernel: KernelProcess | None = None
    status: KernelState = "dead"
    reason: str = "not started"  # NOT_STARTED: never had a kernel, so there is nothing to report
    queue: deque[_Run] = field(default_factory=deque)
    current: _Run | None = None
    last_run: RunId = RunId("")
    last_active: float = field(default_factory=time.monotonic)
    lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def session_id(self) -> SessionId:
        return SessionId(f"{self.notebook_id}-u{self.user_id}")

    def busy(self) -> bool:
        return self.current is not None or bool(self.queue)


class SessionManager:
    """The server's kernels (console.protocols.KernelManager).

    kernel_module: the kernel processes' entry module (tests name one with a scripted engine);
    kernel_env: extra environment for them.
    """

    def __init__(self, cfg: Config, store: RunStore, broadcast: Broadcast, flush_interval: float = 0.05,
                 kernel_env: dict[str, str] | None = None, kernel_module: str = KERNEL_MODULE) -> None:
        self.cfg = cfg
        self.kernel_env = dict(kernel_env or {})
        self.kernel_module = kernel_module
        self.store = store
        self.broadcast = broadcast
        self.locks = NotebookLocks()
        self.batcher = OutputBatcher(store, self._publish, self.locks, flush_interval, data_dir=cfg.data_dir,
                                     inline_bytes=cfg.OUTPUT_INLINE_BYTES)
        self._sessions: dict[tuple[UserId | None, NotebookId], KernelSession] = {}
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._culler: threading.Thread | None = None
        self._answers: dict[str, KernelAnswer] = {}
        self._answered = threading.Condition()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "SessionManager":
        replay.repair_unfinished(self.store, self.cfg.data_dir)  # their log files end where the rows do
        closed = self.store.fail_unfinished_runs()
        if closed:
            log.info("closed %d runs a previous server left unfinished", closed)
        self.batcher.start()
        self._culler = threading.Thread(target=self._cull_loop, name="kernel-culler", daemon=True)
        self._culler.start()
        return self

    def shutdown(self) -> None:
        self._stop.set()
        with self._guard:
            sessions = list(self._sessions.values())
        stoppers = []
        for s in sessions:
            with s.lock:
                kp, s.kernel = s.kernel, None
                self._cancel_queue(s, "the server is stopping")
            if kp is not None:
                t = threading.Thread(target=kp.stop, args=(3.0,), daemon=True)
                t.start()
                stoppers.append(t)
        for t in stoppers:
            t.join(timeout=15)
        self.batcher.stop()

    def session(self, user_id: UserId | None, notebook_id: NotebookId) -> KernelSession:
        with self._guard:
            key = (user_id, notebook_id)
            if key not in self._sessions:
                self._sessions[key] = KernelSession(user_id, notebook_id)
            return self._sessions[key]

    def sessions_of(self, notebook_id: NotebookId) -> list[KernelSession]:
        with self._guard:
            return [s for (_, nb), s in self._sessions.items() if nb == notebook_id]

    # ------------------------------------------------------------------ commands
    def run(self, user_id: UserId | None, notebook_id: NotebookId, mode: str = "cell",
            cell_id: CellId | None = None) -> list[RunId]:
        """Queue one cell, all cells, or a cell and those after it; returns the new run ids."""
        nb = self.store.get_notebook(notebook_id)
        cells = [c for c in nb.cells]
        if mode not in RUN_MODES:
            raise ValueError(f"mode must be one of {', '.join(RUN_MODES)}")
        if mode != "all":
            index = next((i for i, c in enumerate(cells) if c.id == cell_id), None)
            if index is None:
                from console.store import NotFound

                raise NotFound(f"notebook {notebook_id} has no cell {cell_id!r}")
            cells = cells[index:index + 1] if mode == "cell" else cells[index:]
        cells = [c for c in cells if c.kind != "markdown"]
        # A run marks a state worth finding again in the history (a no-op when it has its row).
        self.store.snapshot_notebook(notebook_id, author_id=user_id)
        session = self.session(user_id, notebook_id)
        ids: list[RunId] = []
        with session.lock:
            for c in cells:
                cell, rec = CellId(c.id), self.store.create_run(notebook_id, CellId(c.id), c.source, user_id=user_id)
                run_id = RunId(rec.id)
                self.batcher.open_run(run_id, notebook_id, cell)
                session.queue.append(_Run(run_id, cell, c.source, c.kind))
                self._publish(notebook_id, [CellStatusEvent(notebook_id, cell, run_id, "queued")])
                ids.append(run_id)
            session.last_active = time.monotonic()
            self._pump(session)
        return ids

    def interrupt(self, user_id: UserId | None, notebook_id: NotebookId) -> dict[str, Any]:
        """Cancel the queued cells and interrupt the running one."""
        session = self.session(user_id, notebook_id)
        with session.lock:
            cancelled = self._cancel_queue(session, "cancelled by an interrupt")
            running = session.current.run_id if session.current else None
            if session.current is not None and session.kernel is not None:
                session.current.interrupted = True
                session.kernel.send(InterruptCommand(notebook_id))
        return {"interrupted": running, "cancelled": cancelled}

    def restart(self, user_id: UserId | None, notebook_id: NotebookId) -> None:
        """Stop the kernel (its tables go) and start a fresh one at once."""
        session = self.session(user_id, notebook_id)
        with session.lock:
            self._cancel_queue(session, "cancelled by a kernel restart")
            old, session.kernel = session.kernel, None
            run, session.current = session.current, None
            if run is not None:
                run.error = ErrorEvent(kind="interrupted", message="the kernel was restarted while this cell ran")
                self._finish(session, run, "interrupted")
            self._start_kernel(session)
        if old is not None:
            old.send(InterruptCommand(notebook_id))
            threading.Thread(target=old.stop, args=(2.0,), name="kernel-stop", daemon=True).start()

    def query(self, user_id: UserId | None, notebook_id: NotebookId, what: str, args: dict[str, Any],
              timeout: float = 30.0) -> dict[str, Any]:
        session = self.session(user_id, notebook_id)
        kp = session.kernel
        if kp is None or not kp.alive():
            raise LookupError("the kernel is not running; run the cell again")
        request_id = uuid.uuid4().hex
        if not kp.send(KernelQuery(request_id, what, args)):
            raise LookupError("the kernel is not running; run the cell again")
        with self._answered:
            if not self._answered.wait_for(lambda: request_id in self._answers, timeout):
                raise TimeoutError(f"the kernel did not answer {what} within {timeout:.0f} s")
            answer = self._answers.pop(request_id)
        if answer.error:
            raise (ValueError if answer.bad_request else LookupError)(answer.error)
        return answer.data

    def replay(self, notebook_id: NotebookId, since: dict[str, int], metrics_since: dict[str, int]) -> list[Message]:
        """What a joining viewer needs; call it holding self.locks(notebook_id) (see sockets.join)."""
        events: list[Message] = [
            KernelStatusEvent(notebook_id, s.status, s.reason, s.user_id) for s in self.sessions_of(notebook_id)
            if s.reason != NOT_STARTED
        ]
        events += replay.notebook_events(self.store, notebook_id, since, metrics_since,
                                         inline_bytes=self.cfg.OUTPUT_INLINE_BYTES, result_rows=self.cfg.RESULT_ROWS)
        return events

    # ------------------------------------------------------------------ the queue
    def _pump(self, session: KernelSession) -> None:
        """Send the next queued cell when nothing runs (session.lock held)."""
        if session.current is not None or not session.queue:
            return
        if session.kernel is None:
            self._start_kernel(session)
            if session.kernel is None:
                return
        run = session.current = session.queue.popleft()
        session.last_run = run.run_id
        self._set_status(session, "busy" if session.status != "starting" else "starting")
        session.kernel.send(ExecuteCommand(session.notebook_id, run.cell_id, run.run_id, run.source, run.kind))

    def _start_kernel(self, session: KernelSession) -> None:
        kp: KernelProcess | None = None

        def on_event(msg: Message) -> None:
            self._on_event(session, kp, msg)

        def on_system(stream: str, text: str) -> None:
            run_id = session.current.run_id if session.current else session.last_run
            if run_id:
                cell = self._cell_of(session, run_id)
                self.batcher.add(OutputEvent(text, "kernel", "system", session.notebook_id, cell, run_id))
            else:
                log.info("kernel %s %s: %s", session.session_id, stream, text.rstrip())

        def on_exit(reason: str, expected: bool) -> None:
            self._on_exit(session, kp, reason, expected)

        kp = KernelProcess(self.cfg, session.notebook_id, session.session_id, on_event, on_system, on_exit,
                           self.kernel_env, self.kernel_module)
        session.kernel = kp
        self._set_status(session, "starting")
        try:
            kp.start()
        except OSError as exc:
            session.kernel = None
            self._set_status(session, "dead", f"the kernel could not start: {exc}")

    def _cell_of(self, session: KernelSession, run_id: RunId) -> CellId:
        if session.current and session.current.run_id == run_id:
            return session.current.cell_id
        return CellId("")

    def _on_event(self, session: KernelSession, kp: KernelProcess | None, msg: Message) -> None:
        if isinstance(msg, (OutputEvent, MetricsEvent)):
            if msg.run_id:
                self.batcher.add(msg)
            return
        if isinstance(msg, KernelLogEvent):
            # The kernel's own log (an internal error's traceback under its id): ours, never a viewer's.
            log.log(msg.level, "kernel %s: %s", session.session_id, msg.text)
            return
        if isinstance(msg, KernelAnswer):
            with self._answered:
                self._answers[msg.request_id] = msg
                self._answered.notify_all()
            return
        if isinstance(msg, NotebookRequest):
            if kp is not None:
                # Resolved for the user this kernel runs for, among what that user may read.
                kp.send(includes.notebook_cells(self.store, session.user_id, msg))
            return
        with session.lock:
            if kp is not session.kernel:
                return  # a stopped kernel's last words about a run already closed
            if isinstance(msg, KernelStatusEvent):
                self._set_status(session, "busy" if session.current else "idle")
                return
            run = session.current
            if run is None or getattr(msg, "run_id", None) != run.run_id:
                return
            if isinstance(msg, ResultEvent):
                run.result = msg
            elif isinstance(msg, ErrorEvent):
                run.error = msg
            elif isinstance(msg, CellStatusEvent) and msg.status == "running":
                with self.locks(session.notebook_id):
                    self.store.set_run_status(run.run_id, "running")
                    self._publish(session.notebook_id, [msg])
            elif isinstance(msg, CellStatusEvent):
                session.current = None
                status = "interrupted" if run.interrupted and msg.status == "error" else msg.status
                self._finish(session, run, status, msg.elapsed_ms)
                session.last_active = time.monotonic()
                if not session.queue:
                    self._set_status(session, "idle")
                self._pump(session)

    def _on_exit(self, session: KernelSession, kp: KernelProcess | None, reason: str, expected: bool) -> None:
        with session.lock:
            if kp is not session.kernel:
                return
            session.kernel = None
            run, session.current = session.current, None
            if run is not None:
                run.error = ErrorEvent(kind="kernel", message=(
                    f"The kernel died: {reason}. Its tables are gone; the next run starts a new kernel."))
                self._finish(session, run, "error")
            self._cancel_queue(session, f"the kernel died: {reason}")
            self._set_status(session, "dead", reason)

    def _finish(self, session: KernelSession, run: _Run, status: CellState, elapsed_ms: int | None = None) -> None:
        """Flush the run's output, store how it ended, then tell the room (output before result)."""
        self.batcher.flush_run(run.run_id)
        ids = (session.notebook_id, run.cell_id, run.run_id)
        if run.result:
            run.result = dataclasses.replace(run.result, notebook_id=ids[0], cell_id=ids[1], run_id=ids[2])
        if run.error:
            run.error = dataclasses.replace(run.error, notebook_id=ids[0], cell_id=ids[1], run_id=ids[2])
        with self.locks(session.notebook_id):
            try:
                self.store.finish_run(run.run_id, status, error=run.error.to_wire() if run.error else None,
                                      result=run.result.to_wire() if run.result else None)
            except Exception:  # viewers still learn how the run ended
                log.exception("storing the end of run %s failed", run.run_id)
            ends: list[Message] = [m for m in (run.result, run.error) if m is not None]
            ends.append(CellStatusEvent(*ids, status, elapsed_ms))
            self._publish(session.notebook_id, ends)
        self.batcher.close_run(run.run_id)

    def _cancel_queue(self, session: KernelSession, why: str) -> list[RunId]:
        cancelled: list[RunId] = []
        while session.queue:
            run = session.queue.popleft()
            run.error = ErrorEvent(kind="interrupted", message=why)
            self._finish(session, run, "cancelled")
            cancelled.append(run.run_id)
        return cancelled

    def _set_status(self, session: KernelSession, status: KernelState, reason: str = "") -> None:
        if status == session.status and reason == session.reason:
            return
        session.status, session.reason = status, reason
        self._publish(session.notebook_id, [KernelStatusEvent(session.notebook_id, status, reason, session.user_id)])

    def _publish(self, notebook_id: NotebookId, messages: list[Message]) -> None:
        with self.locks(notebook_id):
            try:
                self.broadcast(notebook_id, [m.to_wire() for m in messages])
            except Exception:  # a viewer's socket trouble must not stop the kernel's work
                log.exception("broadcast to notebook %s failed", notebook_id)

    # ------------------------------------------------------------------ culling
    def _cull_loop(self) -> None:
        idle = float(self.cfg.KERNEL_IDLE_SECONDS)
        tick = max(0.2, min(30.0, idle / 4))
        while not self._stop.wait(tick):
            with self._guard:
                sessions = list(self._sessions.values())
            for s in sessions:
                self._maybe_cull(s, idle)

    def _maybe_cull(self, session: KernelSession, idle: float) -> None:
        with session.lock:
            if session.kernel is None or session.busy() or time.monotonic() - session.last_active < idle:
                return
            kp, session.kernel = session.kernel, None
            self._set_status(session, "dead", f"stopped after {int(idle)} s idle; the next run starts a new kernel")
        kp.stop()
