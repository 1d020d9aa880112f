"""What the session manager does with each message a kernel sends (console/server/sessions/kernels.py).

The kernel runs a member's code, so every message is untrusted (console/wire/kernel.py): a run's
output, metrics, result, error, manifest and end are taken only for the run the kernel is
executing (output and metrics also for the one it executed last: an actor's late line) and
become events stamped with this server's own ids; anything else is dropped, said once per kernel.
Its log records go to the server's log; its environment builds and notebook reads (includes) are
answered for whoever runs the cell now. A mixin of the manager, as culling.py is.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from console.clock import Clock
from console.config import Config
from console.outputs.batcher import NotebookLocks, OutputBatcher
from console.protocols import RunStore
from console.server.sessions import environments, includes, manifests, ray_usage
from console.server.sessions.kernel_process import KernelProcess
from console.server.sessions.kernel_session import KernelSession, QueuedRun as _Run
from console.wire.browser import (CellState, CellStatusEvent, ErrorEvent, KernelState, MetricsEvent, OutputEvent,
                                  ResultEvent)
from console.wire.codec import Message
from console.wire.kernel import (EnvironmentBuild, EnvironmentChanged, KernelLogEvent, KernelReady, NotebookRequest,
                                 RunEnded, RunError, RunManifest, RunMessage, RunMetrics, RunOutput, RunRayUsage,
                                 RunResult, RunStarted)

if TYPE_CHECKING:
    from console.ids import NotebookId, UserId
    from console.server.sessions.openlineage import Emitter

log = logging.getLogger("console.server.sessions.kernels")  # one logger for the manager's words
_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)


class KernelEvents:
    """The manager's handling of kernel messages; the manager provides the rest."""

    cfg: Config
    clock: Clock
    store: RunStore
    batcher: OutputBatcher
    locks: NotebookLocks
    lineage: Emitter | None

    def user_name(self, user_id: UserId | None) -> str:
        raise NotImplementedError

    def _set_status(self, session: KernelSession, status: KernelState, reason: str = "") -> None:
        raise NotImplementedError

    def _publish(self, notebook_id: NotebookId, messages: list[Message]) -> None:
        raise NotImplementedError

    def _finish(self, session: KernelSession, run: _Run, status: CellState, elapsed_ms: int | None = None) -> None:
        raise NotImplementedError

    def _cancel_batch(self, session: KernelSession, batch: str) -> None:
        raise NotImplementedError

    def _pump(self, session: KernelSession) -> None:
        raise NotImplementedError

    def _on_event(self, session: KernelSession, kp: KernelProcess | None, msg: Message) -> None:
        if isinstance(msg, KernelLogEvent):
            # The kernel's own log (an internal error's traceback under its id): ours, never a viewer's.
            log.log(msg.level if msg.level in _LEVELS else logging.WARNING, "kernel %s: %s", session.session_id,
                    msg.text)
            return
        if isinstance(msg, EnvironmentChanged):
            if kp is not None and kp is session.kernel:
                environments.save(self.store, session, msg)
            return
        if isinstance(msg, EnvironmentBuild):
            if kp is not None:  # minutes, maybe: not on this kernel's reading thread
                from console.server.sessions import env_builds

                threading.Thread(target=env_builds.answer, args=(self.cfg, kp, msg), daemon=True,
                                 name=f"env-build-{session.session_id}").start()
            return
        if isinstance(msg, NotebookRequest):
            if kp is not None:
                # Resolved for who ran the cell now running (the session is shared), among what that
                # user may read; asked between runs, for nobody, so it reads nothing.
                with session.lock:
                    run = session.current if kp is session.kernel else None
                kp.send(includes.notebook_cells(self.store, run.user_id if run else None, msg))
            return
        with session.lock:
            if kp is not session.kernel:
                return  # a stopped kernel's last words about a run already closed
            if isinstance(msg, KernelReady):
                self._set_status(session, "busy" if session.current else "idle")
            elif isinstance(msg, RunMessage):
                self._on_run_message(session, msg)
            elif isinstance(msg, RunRayUsage):
                try:
                    usage = ray_usage.accept(session, msg)
                except ray_usage.Refused as exc:
                    self._drop(session, msg, str(exc))
                else:
                    if usage is not None:  # None: too soon after the last one
                        self._publish(session.notebook_id, [usage])

    def _on_run_message(self, session: KernelSession, msg: RunMessage) -> None:
        """A kernel's word about a run, kept only for its current run (session.lock held)."""
        run = session.current
        if run is None or msg.run_id != run.run_id:
            late = session.last
            if isinstance(msg, (RunOutput, RunMetrics)) and late is not None and msg.run_id == late.run_id:
                run = late
            else:
                self._drop(session, msg)
                return
        ids = (session.notebook_id, run.cell_id, run.run_id)
        if isinstance(msg, RunOutput):
            self.batcher.add(OutputEvent(msg.text, msg.source, msg.stream, *ids))
        elif isinstance(msg, RunMetrics):
            self.batcher.add(MetricsEvent(dict(msg.values), msg.source, msg.step, *ids, ts=time.time()))
        elif isinstance(msg, RunResult):
            run.result = ResultEvent(msg.name, msg.columns, msg.rows, msg.total_rows, *ids)
        elif isinstance(msg, RunError):
            run.error = ErrorEvent(msg.kind, msg.message, msg.line, msg.column, msg.traceback, *ids)
        elif isinstance(msg, RunManifest):
            manifests.accept(run, msg)
        elif isinstance(msg, RunStarted):
            run.began = True
            if self.lineage is not None:
                self.lineage.started(run.run_id, session.notebook_id, run.cell_id, run.kind)
            with self.locks(session.notebook_id):
                self.store.set_run_status(run.run_id, "running")
                self._publish(session.notebook_id, [CellStatusEvent(*ids, "running", None, run.user_id,
                                                                    self.user_name(run.user_id), *run.job)])
        elif isinstance(msg, RunEnded):
            session.current, session.last = None, run
            status: CellState = "interrupted" if run.interrupted and msg.status == "error" else msg.status
            stops_batch = status == "error" and bool(run.batch)  # Run all stops at the first failure (Jupyter)
            if all(stops_batch and queued.batch == run.batch for queued in session.queue):
                # Idle first, as a dead kernel is dead first: whoever sees the run's end sees the kernel free.
                self._set_status(session, "idle")
            self._finish(session, run, status, msg.elapsed_ms)
            if stops_batch:
                self._cancel_batch(session, run.batch)
            session.last_active = self.clock.monotonic()
            self._pump(session)

    def _drop(self, session: KernelSession, msg: Message, why: str = "") -> None:
        """A kernel spoke of a run it is not executing (or `why` it was refused): dropped, said once per kernel."""
        session.dropped += 1
        if session.dropped == 1:
            log.warning("kernel %s: %s (%s %s); dropped, and later ones too", session.session_id,
                        why or "it spoke of a run it is not executing", msg.type, str(getattr(msg, "run_id", ""))[:64])
