"""One notebook's session as the SessionManager (console/server/sessions/kernels.py) holds it: its kernel, its
run queue, the run it executes, and what the Running page reads of it (console/server/api/running.py).

Every field is read and written under `lock`, by the manager, the kernel's reader threads and
the culler (console/server/sessions/culling.py).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from console.ids import CellId, NotebookId, RunId, SessionId, UserId
from console.server.sessions.kernel_process import KernelProcess
from console.wire.browser import ErrorEvent, KernelState, ResultEvent
from console.wire.kernel import ReplayInputs

NOT_STARTED = "not started"


@dataclass
class QueuedRun:
    """A cell's run from the moment it is queued until the kernel reports its end."""

    run_id: RunId
    cell_id: CellId
    source: str
    kind: str
    result: ResultEvent | None = None
    error: ErrorEvent | None = None
    interrupted: bool = False  # the user asked; however the cell then stops, it was interrupted
    batch: str = ""  # the Run all / run-from-here it belongs to: its first failure cancels the rest
    user_id: UserId | None = None  # who ran it: its includes are checked against this user
    # Its manifest (console/server/sessions/manifests.py): the revision and parameters it was queued with,
    # and what the kernel reported it read and wrote, kept until the run ends.
    revision: int | None = None
    params: dict[str, str] = field(default_factory=dict)
    queued_at: float = field(default_factory=time.time)
    job: tuple[str, str] = ("", "")  # (job id, job name) of the job run that queued it, if one did
    io: list[dict[str, Any]] = field(default_factory=list)
    io_dropped: int = 0
    lock_hash: str = ""  # the notebook environment's lock the run ran in, as the kernel reported it
    replay: ReplayInputs | None = None  # a replay of a recorded run: what that run read (server/api/rerun.py)
    replay_of: str = ""  # that recorded run's id, for the replay's manifest
    began: bool = False  # the kernel said it started the run (an OpenLineage START went out, if any)


@dataclass
class KernelSession:
    """What the manager holds for one notebook (or a job's lane of it)."""

    user_id: UserId | None  # None for the notebook's shared session; a job's owner for its lane
    notebook_id: NotebookId
    kernel: KernelProcess | None = None
    lane: str = ""  # "" = the notebook's interactive session; a job's own session has its own lane
    status: KernelState = "dead"
    reason: str = "not started"  # NOT_STARTED: never had a kernel, so there is nothing to report
    queue: deque[QueuedRun] = field(default_factory=deque)
    current: QueuedRun | None = None
    last_run: RunId = RunId("")
    last: QueuedRun | None = None  # the kernel's last finished run: an actor's late line still belongs to it
    dropped: int = 0  # messages of the current kernel about other runs, dropped
    last_active: float = field(default_factory=time.monotonic)
    lock: threading.RLock = field(default_factory=threading.RLock)
    started_by: UserId | None = None  # who started its kernel: the per-user cap counts it for them
    started_at: float = 0.0  # wall clock of that start
    runners: dict[UserId, float] = field(default_factory=dict)  # who ran cells in this kernel, last when
    ray_usage: Any = None  # the kernel's last Ray usage report (server/sessions/ray_usage.py LastUsage)

    @property
    def session_id(self) -> SessionId:
        return SessionId(f"{self.notebook_id}" + (f"-u{self.user_id}-{self.lane}" if self.lane else ""))

    def busy(self) -> bool:
        return self.current is not None or bool(self.queue)
