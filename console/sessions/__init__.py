"""Live sessions: kernel processes per (user, notebook), run queues, and output that is never lost.

    SessionManager(cfg, store, broadcast).start()
    .run(user_id, notebook_id, mode="cell"|"all"|"from", cell_id) -> run ids
    .interrupt(user_id, notebook_id); .restart(user_id, notebook_id)
    .replay(notebook_id, since, metrics_since) under .locks(notebook_id)
"""
from __future__ import annotations

from .manager import KernelSession, SessionManager

__all__ = ["KernelSession", "SessionManager"]
