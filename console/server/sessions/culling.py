"""Idle kernels stop: the culler thread of a SessionManager (console/server/sessions/kernels.py).

A session's kernel stops after KERNEL_IDLE_SECONDS without a run (never while one runs or waits);
its page learns it as a dead kernel with the reason, and its next run starts a new kernel. A
mixin of the manager, so that it reads the manager's sessions and announces through its status.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from console.clock import Clock
from console.config import Config
from console.server.sessions.kernel_session import KernelSession

if TYPE_CHECKING:
    from console.wire.browser import KernelState


class Culling:
    """The manager's idle culling: start it with a thread on _cull_loop; _stop ends it."""

    cfg: Config
    clock: Clock
    _stop: threading.Event

    def all_sessions(self) -> list[KernelSession]:
        raise NotImplementedError

    def _set_status(self, session: KernelSession, status: "KernelState", reason: str = "") -> None:
        raise NotImplementedError

    def _cull_loop(self) -> None:
        idle = float(self.cfg.KERNEL_IDLE_SECONDS)
        tick = max(0.2, min(30.0, idle / 4))
        while not self.clock.sleep(tick, self._stop):
            for s in self.all_sessions():
                self._maybe_cull(s, idle)

    def _maybe_cull(self, session: KernelSession, idle: float) -> None:
        with session.lock:
            if session.kernel is None or session.busy() or self.clock.monotonic() - session.last_active < idle:
                return
            kp, session.kernel = session.kernel, None
            self._set_status(session, "dead", f"stopped after {int(idle)} s idle; the next run starts a new kernel")
        kp.stop()
