"""SessionManager: one kernel process per notebook, each with a run queue; the one owner of both.

A notebook's interactive session is shared: every runner's cells run in the same kernel, so its
tables and Python globals are the notebook's (as in Databricks). Each run remembers who queued it:
the cell, the stored run and the page say so, and what the kernel asks of the server (an include)
is answered with that person's rights, never the session's first user's. A job's run has a
session of its own (a lane, keyed by its owner) so it never touches the page's.

A run is stored (status queued) before it is queued, so a viewer that joins sees it at once.
A session sends one ExecuteCommand at a time and the next when the kernel reports the cell's end;
interrupt cancels the queue and interrupts the running cell; a dying kernel fails its running
cell with the reason, cancels the queue and is announced as dead, and nothing else is touched.

The kernel runs a member's code, so what it says is untrusted (console/wire/kernel.py): output,
metrics, results, errors and ends are accepted only for the run it is executing (output and
metrics also for the run it executed last: an actor's late line), and become events stamped
with this server's own notebook, cell and run ids; anything else is dropped and logged once
per kernel. A kernel that breaks the protocol itself is stopped (kernel_process.py).
What a session holds is kernel_session.py's; what each kernel message does, kernel_events.py's;
stopping idle kernels is culling.py's.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from contextlib import AbstractContextManager
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from console.server.sessions.run_ends import RunEnds
from console.server.sessions import session_cap
from console.clock import Clock, SystemClock
from console.config import Config
from console.store.errors import NotFound
from console.lang import params as notebook_params
from console.ids import CellId, NotebookId, RunId, UserId
from console.outputs import replay
from console.outputs.batcher import NotebookLocks, OutputBatcher
from console.protocols import RunStore
from console.server.sessions import environments, manifests, ray_usage
from console.server.sessions.culling import Culling
from console.server.sessions.kernel_events import KernelEvents
from console.cluster import head_pool, ray_map
from console.cluster.session_head import wants_ray
from console.server.sessions.kernel_process import KERNEL_MODULE, KernelProcess
from console.server.sessions.kernel_session import NOT_STARTED, KernelSession, QueuedRun as _Run
from console.wire.browser import (CellState, CellStatusEvent, ErrorEvent, KernelState, KernelStatusEvent, OutputEvent)
from console.wire.codec import Message
from console.wire.kernel import (ExecuteCommand, ReplayInputs, KernelInterrupt)

if TYPE_CHECKING:
    from console.server.sessions.openlineage import Emitter

log = logging.getLogger(__name__)

Broadcast = Callable[[str, list[dict[str, Any]]], None]  # (notebook_id, wire dicts)
RUN_MODES = ("cell", "all", "from")


class SessionManager(KernelEvents, Culling):
    """The server's kernels (console.protocols.KernelManager).

    kernel_module: the kernel processes' entry module (tests name one with a scripted engine);
    kernel_env: extra environment for them.
    """

    def __init__(self, cfg: Config, store: RunStore, broadcast: Broadcast, flush_interval: float = 0.05,
                 kernel_env: dict[str, str] | None = None, kernel_module: str = KERNEL_MODULE,
                 clock: Clock | None = None) -> None:
        self.cfg = cfg
        self.clock: Clock = clock or SystemClock()  # paces output flushes and idle culling
        self.kernel_env = dict(kernel_env or {})
        self.kernel_module = kernel_module
        self.store = store
        self.broadcast = broadcast
        self.locks = NotebookLocks()
        self.batcher = OutputBatcher(store, self._publish, self.locks, flush_interval, data_dir=cfg.data_dir,
                                     inline_bytes=cfg.OUTPUT_INLINE_BYTES, clock=self.clock)
        self._sessions: dict[tuple[UserId | None, NotebookId, str], KernelSession] = {}
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._culler: threading.Thread | None = None
        self.ray_map = ray_map.from_settings(cfg)  # users mapped to clusters of their own; checked at start
        self.pool = head_pool.for_server(cfg)  # session heads started before their sessions (None: no pool)
        self.ends = RunEnds()  # a job's runner waits on a run's end, not on the store
        # OpenLineage events of every run, only when the admin names a receiver: unset, the client
        # library is not even imported (console/server/sessions/openlineage.py).
        self.lineage: Emitter | None = None
        if cfg.OPENLINEAGE_URL:
            from console.server.sessions.openlineage import Emitter

            self.lineage = Emitter(cfg, store)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "SessionManager":
        replay.repair_unfinished(self.store, self.cfg.data_dir)  # their log files end where the rows do
        closed = self.store.fail_unfinished_runs()
        if closed:
            log.info("closed %d runs a previous server left unfinished", closed)
        self.batcher.start()
        if self.pool is not None:
            self.pool.start()
        self._culler = threading.Thread(target=self._cull_loop, name="kernel-culler", daemon=True)
        self._culler.start()
        return self

    def shutdown(self) -> None:
        self._stop.set()
        self.ends.wake_all()
        if self.pool is not None:
            self.pool.close()
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
        if self.lineage is not None:  # the runs' last events, a moment to go out
            self.lineage.close()

    def session(self, user_id: UserId | None, notebook_id: NotebookId, lane: str = "") -> KernelSession:
        """The notebook's shared session (lane ""), or a job's own lane of it for user_id."""
        with self._guard:
            key = (user_id if lane else None, notebook_id, lane)
            if key not in self._sessions:
                self._sessions[key] = KernelSession(key[0], notebook_id, lane=lane, last_active=self.clock.monotonic())
            return self._sessions[key]

    def all_sessions(self) -> list[KernelSession]:
        with self._guard:
            return list(self._sessions.values())

    def user_name(self, user_id: UserId | None) -> str:
        """How a page names who did something ("" for nobody, or an account gone meanwhile)."""
        if user_id is None:
            return ""
        try:
            user = self.store.get_user(user_id)
        except Exception:
            return f"user {user_id}"
        return str(user.display_name or user.username)

    def sessions_of(self, notebook_id: NotebookId) -> list[KernelSession]:
        """The notebook's interactive sessions (a job's lane is not a kernel its page drives)."""
        with self._guard:
            return [s for (_, nb, lane), s in self._sessions.items() if nb == notebook_id and not lane]

    def watch_end(self, run_id: RunId) -> AbstractContextManager[threading.Event]:
        return self.ends.watch(run_id)

    def close(self, user_id: UserId | None, notebook_id: NotebookId, lane: str) -> None:
        """Stop a lane's session and forget it (a job's, when the job run ends)."""
        with self._guard:
            session = self._sessions.pop((user_id, notebook_id, lane), None)
        if session is None:
            return
        with session.lock:
            self._cancel_queue(session, "the session was closed")
            kp, session.kernel = session.kernel, None
        if kp is not None:
            threading.Thread(target=kp.stop, args=(3.0,), name="kernel-stop", daemon=True).start()

    def shut_down(self, session: KernelSession, user_id: UserId | None) -> bool:
        """Stop a session's kernel (the Running page's Shut down); the page is told who did it.

        False when it had no kernel. The session stays known (its page may start a new kernel).
        """
        name = self.user_name(user_id)
        with session.lock:
            kp, session.kernel = session.kernel, None
            if kp is None:
                return False
            reason = f"shut down by {name}" if name else "shut down"
            self._set_status(session, "dead", reason + "; the next run starts a new kernel")  # before the runs end
            self._cancel_queue(session, f"the session was shut down by {name}" if name else "the session was shut down")
            run, session.current = session.current, None
            if run is not None:
                run.error = ErrorEvent(kind="interrupted", message="the session was shut down while this cell ran"
                                       + (f" (by {name})" if name else ""))
                self._finish(session, run, "interrupted")
            self._announce(session, "shutdown", name, session.reason)
        threading.Thread(target=kp.stop, args=(3.0,), name="kernel-stop", daemon=True).start()
        return True

    # ------------------------------------------------------------------ commands
    def run(self, user_id: UserId | None, notebook_id: NotebookId, mode: str = "cell",
            cell_id: CellId | None = None, *, params: Mapping[str, str] | None = None) -> list[RunId]:
        """Queue one cell, all cells, or a cell and those after it; returns the new run ids.

        params: checked values of the notebook's parameters (console/lang/params.py).
        """
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
        return self.queue_cells(user_id, notebook_id,
                                [(CellId(c.id), notebook_params.apply(c.kind, c.source, params or {}), c.kind)
                                 for c in cells], batch=uuid.uuid4().hex if mode != "cell" else "",
                                params=params, revision=nb.revision)

    def queue_cells(self, user_id: UserId | None, notebook_id: NotebookId, cells: list[tuple[CellId, str, str]],
                    lane: str = "", batch: str = "", *, params: Mapping[str, str] | None = None,
                    revision: int | None = None, job: tuple[str, str] = ("", ""),
                    replay: ReplayInputs | None = None, replay_of: str = "") -> list[RunId]:
        """Queue (cell id, source, kind) as given in the (user, notebook, lane) session; the new run ids.

        params, revision: what the runs' manifests record they ran with (console/server/sessions/manifests.py);
        job: (id, name) of the job run queueing them, said on each of their cell_status events.
        """
        session = self.session(user_id, notebook_id, lane)
        if session.kernel is None:  # a new kernel: within the cap of who starts it (server/sessions/session_cap.py)
            session_cap.check(self.cfg, self.store, session, self.all_sessions(), user_id)
        ids: list[RunId] = []
        name = self.user_name(user_id)
        with session.lock:
            for cell_id, source, kind in cells:
                cell, rec = cell_id, self.store.create_run(notebook_id, cell_id, source, user_id=user_id)
                run_id = RunId(rec.id)
                self.batcher.open_run(run_id, notebook_id, cell)
                session.queue.append(_Run(run_id, cell, source, kind, batch=batch, user_id=user_id,
                                          revision=revision, params=dict(params or {}), job=job, replay=replay,
                                          replay_of=replay_of))
                self._publish(notebook_id, [CellStatusEvent(notebook_id, cell, run_id, "queued", None, user_id,
                                                            name, *job)])
                ids.append(run_id)
            session.last_active = self.clock.monotonic()
            self._pump(session)
        return ids

    def interrupt(self, user_id: UserId | None, notebook_id: NotebookId, lane: str = "") -> dict[str, Any]:
        """Cancel the queued cells and interrupt the running one."""
        session = self.session(user_id, notebook_id, lane)
        name = self.user_name(user_id)
        with session.lock:
            cancelled = self._cancel_queue(session, f"cancelled by an interrupt ({name})" if name else
                                           "cancelled by an interrupt")
            running = session.current.run_id if session.current else None
            if session.current is not None and session.kernel is not None:
                session.current.interrupted = True
                session.kernel.send(KernelInterrupt())
            self._announce(session, "interrupt", name)
        return {"interrupted": running, "cancelled": cancelled}

    def restart(self, user_id: UserId | None, notebook_id: NotebookId) -> None:
        """Stop the kernel (its tables go) and start a fresh one at once."""
        session = self.session(user_id, notebook_id)
        name = self.user_name(user_id)
        with session.lock:
            self._cancel_queue(session, "cancelled by a kernel restart")
            old, session.kernel = session.kernel, None
            run, session.current = session.current, None
            if run is not None:
                run.error = ErrorEvent(kind="interrupted", message="the kernel was restarted while this cell ran"
                                       + (f" (by {name})" if name else ""))
                self._finish(session, run, "interrupted")
            self._announce(session, "restart", name)
            self._start_kernel(session, user_id)
        if old is not None:
            old.send(KernelInterrupt())
            threading.Thread(target=old.stop, args=(2.0,), name="kernel-stop", daemon=True).start()

    def query(self, user_id: UserId | None, notebook_id: NotebookId, what: str, args: dict[str, Any],
              timeout: float = 30.0) -> dict[str, Any]:
        session = self.session(None, notebook_id)  # the notebook's shared session, whoever asks
        kp = session.kernel
        if kp is None or not kp.alive():
            raise LookupError("the kernel is not running; run the cell again")
        return kp.ask(what, args, timeout)

    def replay(self, notebook_id: NotebookId, since: dict[str, int], metrics_since: dict[str, int]) -> list[Message]:
        """What a joining viewer needs; call it holding self.locks(notebook_id) (see sockets.join)."""
        events: list[Message] = [
            KernelStatusEvent(notebook_id, s.status, s.reason, s.user_id) for s in self.sessions_of(notebook_id)
            if s.reason != NOT_STARTED
        ]
        events += replay.notebook_events(self.store, notebook_id, since, metrics_since,
                                         inline_bytes=self.cfg.OUTPUT_INLINE_BYTES, result_rows=self.cfg.RESULT_ROWS)
        events += [e for s in self.sessions_of(notebook_id) if (e := ray_usage.replayed(s)) is not None]
        return events

    # ------------------------------------------------------------------ the queue
    def _pump(self, session: KernelSession) -> None:
        """Send the next queued cell when nothing runs (session.lock held)."""
        if session.current is not None or not session.queue:
            return
        if session.kernel is None:
            self._start_kernel(session, session.queue[0].user_id)
            if session.kernel is None:
                return
        run = session.current = session.queue.popleft()
        session.last_run = run.run_id
        if run.user_id is not None:
            session.runners[run.user_id] = time.time()
        self._set_status(session, "busy" if session.status != "starting" else "starting")
        session.kernel.send(ExecuteCommand(run.run_id, run.cell_id, run.source, run.kind,  # type: ignore[arg-type]
                                           replay=run.replay))
        cluster = session.kernel.cluster
        if cluster is not None and any(wants_ray(r.source) for r in (run, *session.queue)):
            cluster.warm()  # its own Ray head starts while the cells before its first Ray cell run

    def _start_kernel(self, session: KernelSession, by: UserId | None) -> None:
        kp: KernelProcess | None = None
        session.started_by, session.started_at, session.runners = by, time.time(), {}

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

        kp = KernelProcess(self._kernel_config(session.notebook_id), session.notebook_id, session.session_id,
                           on_event, on_system, on_exit,
                           {**self.kernel_env, **environments.start_env(self.store, session)}, self.kernel_module,
                           self.pool if self._may_use_ray(session) else None)
        session.kernel, session.last, session.dropped, session.ray_usage = kp, None, 0, None
        self._set_status(session, "starting")
        try:
            kp.start()
        except OSError as exc:
            session.kernel = None
            self._set_status(session, "dead", f"the kernel could not start: {exc}")

    def _may_use_ray(self, session: KernelSession) -> bool:
        """Whether a starting kernel takes a pooled head: what it is to run, or its notebook, mentions
        Ray. A notebook that never does keeps the pool's heads for those that will (a head taken is
        an idle head's memory for as long as the session lives)."""
        if self.pool is None:
            return False
        if any(wants_ray(r.source) for r in session.queue):
            return True
        try:
            return any(wants_ray(c.source) for c in self.store.get_notebook(session.notebook_id).cells)
        except NotFound:
            return False

    def _kernel_config(self, notebook_id: NotebookId) -> Config:
        """The settings of a notebook's kernel: its owner's Ray cluster where CONSOLE_RAY_CLUSTER_MAP maps them."""
        if self.ray_map is None:
            return self.cfg
        try:
            owner_id = self.store.get_notebook(notebook_id).owner_id
            owner = self.store.get_user(owner_id).username if owner_id is not None else None
        except NotFound:  # a notebook (or its owner) gone: the server's own settings
            return self.cfg
        cfg: Config = ray_map.config_for(self.cfg, self.ray_map.cluster_of(owner))
        return cfg

    def _cell_of(self, session: KernelSession, run_id: RunId) -> CellId:
        if session.current and session.current.run_id == run_id:
            return session.current.cell_id
        return CellId("")

    def _on_exit(self, session: KernelSession, kp: KernelProcess | None, reason: str, expected: bool) -> None:
        with session.lock:
            if kp is not session.kernel:
                return
            session.kernel = None
            # Dead first: whoever sees the run's end (the store, the page) then sees why.
            self._set_status(session, "dead", reason)
            run, session.current = session.current, None
            if run is not None:
                run.error = ErrorEvent(kind="kernel", message=(
                    f"The kernel died: {reason}. Its tables are gone; the next run starts a new kernel."))
                self._finish(session, run, "error")
            self._cancel_queue(session, f"the kernel died: {reason}")

    def _finish(self, session: KernelSession, run: _Run, status: CellState, elapsed_ms: int | None = None) -> None:
        """Flush the run's output, store how it ended, then tell the room (output before result)."""
        self.batcher.flush_run(run.run_id)
        ids = (session.notebook_id, run.cell_id, run.run_id)
        if run.error:  # the server's own (a restart, a dead kernel, a cancel) name no run yet
            run.error = dataclasses.replace(run.error, notebook_id=ids[0], cell_id=ids[1], run_id=ids[2])
        with self.locks(session.notebook_id):
            manifest = manifests.ended(self.cfg.data_dir / "lake", run)
            try:
                # With its manifest, in one commit: whoever sees the run ended finds it.
                self.store.finish_run(run.run_id, status, error=run.error.to_wire() if run.error else None,
                                      result=run.result.to_wire() if run.result else None, manifest=manifest)
            except Exception:  # viewers still learn how the run ended
                log.exception("storing the end of run %s failed", run.run_id)
            if self.lineage is not None:  # every run path ends here: cells, Run all, jobs, replays
                self.lineage.ended(run.run_id, session.notebook_id, run.cell_id, run.kind, status, run.began,
                                   manifest, run.error.message if run.error else "")
            ends: list[Message] = [m for m in (run.result, run.error) if m is not None]
            ends.append(CellStatusEvent(*ids, status, elapsed_ms, run.user_id, self.user_name(run.user_id), *run.job))
            self._publish(session.notebook_id, ends)
        self.batcher.close_run(run.run_id)
        self.ends.ended(run.run_id)

    def _cancel_queue(self, session: KernelSession, why: str) -> list[RunId]:
        cancelled: list[RunId] = []
        while session.queue:
            run = session.queue.popleft()
            run.error = ErrorEvent(kind="interrupted", message=why)
            self._finish(session, run, "cancelled")
            cancelled.append(run.run_id)
        return cancelled

    def _cancel_batch(self, session: KernelSession, batch: str) -> None:
        for run in [r for r in session.queue if r.batch == batch]:
            session.queue.remove(run)
            # kind "not_run": the page shows these quietly, under one banner for the failure above.
            run.error = ErrorEvent(kind="not_run", message="not run: a cell above it failed, and Run all "
                                                          "stops at the first failure")
            self._finish(session, run, "cancelled")

    def _set_status(self, session: KernelSession, status: KernelState, reason: str = "") -> None:
        if status == session.status and reason == session.reason:
            return
        session.status, session.reason = status, reason
        if session.lane:  # a job's kernel: its cells' events reach the page, its status would pose as the owner's
            return
        self._publish(session.notebook_id, [KernelStatusEvent(session.notebook_id, status, reason, session.user_id)])

    def _announce(self, session: KernelSession, action: str, by: str, reason: str = "") -> None:
        """Tell everyone on the page who restarted, interrupted or shut down the shared kernel."""
        if session.lane:
            return
        self._publish(session.notebook_id, [KernelStatusEvent(session.notebook_id, session.status, reason,
                                                              session.user_id, action, by)])

    def _publish(self, notebook_id: NotebookId, messages: list[Message]) -> None:
        with self.locks(notebook_id):
            try:
                self.broadcast(notebook_id, [m.to_wire() for m in messages])
            except Exception:  # a viewer's socket trouble must not stop the kernel's work
                log.exception("broadcast to notebook %s failed", notebook_id)
