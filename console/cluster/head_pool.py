"""Session heads started before their sessions: a kernel's first Ray cell finds its own head up.

A session's own Ray head (cluster/session_head.py) takes ~2 s of CPU to start, and a first Ray cell
that waits for it (or shares the machine's cores with it while the kernel itself starts) is seconds
slower than one on a head that is already up. The head must run as its session's uid, under its
session's memory limit, with its session's hand-off folder: so what the pool keeps ready is the
whole wall of a session that does not exist yet (cluster/walls.py pooled(): a leased uid, the
session cgroup, the hand-off folder) with its head running inside it. A kernel that starts takes
one, wall and head together (its sandbox then runs as that uid, in that cgroup), and the pool
starts another in the background.

What a pooled head is not given: any session's cache folder (its sandbox covers the cache with an
empty tmpfs; actors never read it) and any token but its own. Nothing of one session reaches the
next: a head is taken once, and stopped with the session that took it, like any session head.

CONSOLE_RAY_POOL heads are kept (default 1; 0 turns the pool off). Each idle one holds a head's
memory (bench/session_cluster.py says how much) and one uid of the sandbox's pool.

Runs in: the server (console/server/sessions/kernels.py holds one per data dir).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from console.cluster import walls
from console.cluster.head import short_temp_dir
from console.cluster.session_head import SessionCluster
from console.cluster.walls import SessionWall

log = logging.getLogger(__name__)


class HeadPool:
    """Up to `size` (wall, head) pairs, started in the background; take() hands one over."""

    def __init__(self, cfg: Mapping[str, Any], size: int) -> None:
        self.cfg = cfg
        self.size = max(0, size)
        self._ready: list[tuple[SessionWall, SessionCluster]] = []
        self._starting = 0
        self._closed = False
        self._failed = ""  # why the last start failed: no new attempt until a kernel takes one
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def start(self) -> None:
        """Begin filling the pool (returns at once)."""
        self._fill()

    def take(self, session_id: str) -> tuple[SessionWall, SessionCluster] | None:
        """A ready wall and its running head for `session_id`, or None (the caller makes its own)."""
        taken: tuple[SessionWall, SessionCluster] | None = None
        dead: list[tuple[SessionWall, SessionCluster]] = []
        with self._lock:
            while self._ready and taken is None:
                pair = self._ready.pop(0)
                if pair[1].running():
                    taken = pair
                else:  # died while it waited (killed, out of memory): not to be handed over
                    dead.append(pair)
            self._failed = ""
        for wall, cluster in dead:
            _discard(wall, cluster)
        self._fill()
        if taken is None:
            return None
        wall, cluster = taken
        try:
            walls.adopt(self.cfg, wall, session_id)
        except BaseException:
            _discard(wall, cluster)
            raise
        cluster.adopt(session_id)
        return taken

    def ready(self) -> int:
        with self._lock:
            return len(self._ready)

    def wait_ready(self, count: int, timeout: float) -> bool:
        """Whether `count` heads are ready within `timeout` s (benches and tests; the server never waits)."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._ready) >= count or bool(self._failed), timeout) \
                and len(self._ready) >= count

    def close(self) -> None:
        """Stop every idle head and give back its wall; heads still starting stop when they are up."""
        with self._lock:
            self._closed = True
            ready, self._ready = self._ready, []
        for wall, cluster in ready:
            _discard(wall, cluster)

    def _fill(self) -> None:
        with self._lock:
            missing = 0 if self._closed or self._failed else self.size - len(self._ready) - self._starting
            self._starting += max(0, missing)
        for _ in range(missing):
            threading.Thread(target=self._start_one, name="ray-head-pool", daemon=True).start()

    def _start_one(self) -> None:
        pair: tuple[SessionWall, SessionCluster] | None = None
        try:
            wall = walls.pooled(self.cfg, short_temp_dir(Path(str(self.cfg.get("DATA_DIR") or "./console-data"))))
            cluster = SessionCluster(self.cfg, "", wall)
            pair = (wall, cluster)
            cluster.prepare()
            cluster.ensure()
        except Exception as exc:  # the next kernel starts its own head as it would without a pool
            log.warning("a pooled Ray head did not start: %s", exc)
            if pair is not None:
                _discard(*pair)
            with self._changed:
                self._starting -= 1
                self._failed = str(exc) or type(exc).__name__
                self._changed.notify_all()
            return
        with self._changed:
            self._starting -= 1
            keep = not self._closed
            if keep:
                self._ready.append(pair)
                self._changed.notify_all()
        if not keep:
            _discard(*pair)


def _discard(wall: SessionWall, cluster: SessionCluster) -> None:
    try:
        cluster.stop()
    finally:
        wall.release()


def for_server(cfg: Mapping[str, Any]) -> HeadPool | None:
    """The server's pool: only where its kernels get heads of their own (behind the sandbox)."""
    from console.cluster import sandbox
    from console.cluster.session_head import per_session

    try:
        sandboxed = sandbox.enabled(cfg)
    except sandbox.SandboxUnavailable:  # the kernel's start says why, as it would without a pool
        return None
    size = pool_size(cfg)
    return HeadPool(cfg, size) if size and per_session(cfg, sandboxed) else None


def pool_size(cfg: Mapping[str, Any]) -> int:
    """CONSOLE_RAY_POOL (console/config.py checks it is a number)."""
    value = cfg.get("RAY_POOL")
    return max(0, int(value)) if value is not None else 1


__all__ = ["HeadPool", "for_server", "pool_size"]
