"""A kernel session's own Ray cluster: the embedded head when CONSOLE_RAY_CLUSTERS=session (issue 29).

Ray has no access control between the jobs of one cluster: whoever may start a driver may list,
call and kill every named actor, read every object and every log (Ray's own FAQ answers "several
users" with "a cluster per user"). So a sandboxed session does not share the data dir's head. At
its first Ray cell the server starts a head for it alone, made of what the session already owns:
- its uid (the kernel's leased one): other sessions cannot signal, trace or read its processes
  or files, and its actors read its hand-off folder as its owner;
- a token of its own, made here, handed to this session's kernel only (never in an environment
  another session can read: no other session shares its uid);
- a temp dir of its own (its raylet's sockets, its logs) in a folder `<uid>:<uid> 0700` (Ray makes
  the temp dir itself 0777), bound only into this session's sandboxes; a short path under /tmp,
  since Ray's socket paths must stay under 107 bytes;
- a private /dev/shm sized CONSOLE_SESSION_OBJECT_STORE (Ray's object store), with the hand-off
  folder bound back in, so nothing it writes lands in the host's /dev/shm;
- its session's memory limit (CONSOLE_SESSION_MEMORY covers the kernel, its workers and this
  cluster together, cgroup v1; on v2 a group of CONSOLE_RAY_MEMORY of its own), so a runaway
  actor is stopped before the server, and a pids group of its own;
- ports picked free at start; the cell worker maps the seed's `127.0.0.1:10001` to this head
  (worker/cell.py: a loopback address means "the notebook's own cluster").
It stops with the session: when the kernel ends (its head channel closes) or is stopped.

Started ahead of need, twice over: the server keeps CONSOLE_RAY_POOL heads started before any
session asks, each with a whole session wall of its own (a leased uid, the session cgroup, the
hand-off folder: cluster/head_pool.py), and a kernel that starts takes one, wall and head
together, so its first Ray cell finds its head up. Without a pooled one (the pool empty, or 0),
the server warms the session's head (warm()) as soon as a run it sends mentions Ray (wants_ray),
while the kernel and its cell worker start and import (bench/session_cluster.py measures both).

Runs in: the server (kernel_process.py holds one per kernel).
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from console.cluster import limits, sandbox
from console.cluster.head import ClusterInfo, recorded_alive, start_head
from console.cluster.identity import Identity
from console.cluster.procs import stop_process_group
from console.cluster.sandbox import Wall
from console.config import PRIVATE_DIR_NAME
from console.cluster.walls import SessionWall

log = logging.getLogger(__name__)

_SHM_SLACK = 64 << 20  # Ray's own files on /dev/shm beside the object store
# A session's head, workers and actors, threads included (TensorFlow starts dozens per actor):
# a bound for a fork storm in an actor, far above what a notebook's training needs.
_HEAD_PROCESSES = max(4096, 64 * (os.cpu_count() or 1))


def per_session(cfg: Mapping[str, Any], sandboxed: bool) -> bool:
    """Whether a kernel under these settings gets a Ray cluster of its own.

    Only behind the walls: without the sandbox every session's code runs as the server's uid and
    reads whatever it likes, so a cluster of its own would cost a head and protect nothing. An
    existing cluster (CONSOLE_RAY_ADDRESS) is the admin's, never started here.
    """
    return (sandboxed and not cfg.get("RAY_ADDRESS")
            and str(cfg.get("RAY_CLUSTERS") or "session").lower() == "session")


_RAY_WORD = re.compile(r"\bray\b", re.IGNORECASE)


def wants_ray(source: str) -> bool:
    """Whether a cell's text may use Ray (`import ray`, `RayContext`, `run … as Ray`): warm the head."""
    return bool(_RAY_WORD.search(source)) or "RayContext" in source


def session_temp_dir(cfg: Mapping[str, Any], session_id: str, nonce: str) -> Path:
    """The session's Ray temp dir: short (socket paths), and new for each kernel start."""
    data_dir = str(Path(str(cfg.get("DATA_DIR") or "./console-data")).resolve())
    digest = hashlib.sha1(f"{data_dir}\0{session_id}\0{nonce}".encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"mlsr-{digest}"


# How often a session's head may be replaced after it died, before the kernel must restart.
MAX_RESTARTS = 3
RESTART_WINDOW_S = 600.0


class SessionCluster:
    """One kernel's own Ray head: started on the first ensure(), stopped by stop() (idempotent)."""

    def __init__(self, cfg: Mapping[str, Any], session_id: str, wall: SessionWall) -> None:
        self.cfg = cfg
        self.session_id = session_id
        self.wall = wall
        self.root = session_temp_dir(cfg, session_id, secrets.token_hex(4))
        self.temp_dir = self.root / "r"
        self._lock = threading.Lock()
        self._info: ClusterInfo | None = None
        self._cgroup: limits.Cgroup | None = None
        self._stopped = False
        self._warming = False
        self._log: Path | None = None  # the head's start log (kept while the session lives)
        self._restarts: list[float] = []  # when a dead head was replaced (clock() times)
        self.clock: Callable[[], float] = time.monotonic  # tests move it instead of waiting

    def adopt(self, session_id: str) -> None:
        """A head started before its session (cluster/head_pool.py) is given to one: a head started
        again after it died sees that session's cache, and the logs name it."""
        self.session_id = session_id

    def prepare(self) -> None:
        """Make the temp dir the session's alone, before its kernel's sandbox binds it."""
        who = self.wall.lease
        shutil.rmtree(self.root, ignore_errors=True)
        for folder in (self.root, self.temp_dir):
            folder.mkdir(mode=0o700)
            if who is not None:
                os.chown(folder, who.uid, who.gid)
            os.chmod(folder, 0o700)

    def ensure(self) -> ClusterInfo:
        with self._lock:
            if self._stopped:
                raise RuntimeError("the session has ended")
            if self._info is not None and recorded_alive(self._info):
                return self._info
            if self._info is not None:  # died under the session (OOM, a killed raylet): a new one
                now = self.clock()
                self._restarts = [t for t in self._restarts if now - t < RESTART_WINDOW_S]
                if len(self._restarts) >= MAX_RESTARTS:
                    # A kernel that kills its own head and asks again would burn ~2 s of the
                    # machine's CPU per start, for ever: past a few it has to restart itself.
                    raise RuntimeError(f"this session's Ray cluster stopped {len(self._restarts) + 1} times in "
                                       f"{RESTART_WINDOW_S / 60:.0f} minutes; restart the kernel to start it again")
                self._restarts.append(now)
                log.warning("session %s: its Ray head (pid %s) died; starting another", self.session_id,
                            self._info.pid)
                self._stop_locked()
            self._info = self._start()
            return self._info

    @property
    def info(self) -> ClusterInfo | None:
        """The running head's address, token and pid; None before the first ensure() or after stop()."""
        return self._info

    @property
    def cgroup(self) -> limits.Cgroup | None:
        """The running head's cgroup (its memory is the cluster's), None while none runs."""
        return self._cgroup

    def running(self) -> bool:
        info = self._info
        return info is not None and recorded_alive(info)

    def warm(self) -> None:
        """Start the head on a thread of its own, if it is not up; the next ensure() waits for it."""
        with self._lock:
            if self._stopped or self._warming or (self._info is not None and recorded_alive(self._info)):
                return
            self._warming = True

        def start() -> None:
            try:
                self.ensure()
            except Exception as exc:  # the cell that needs it asks again and shows the reason
                log.info("session %s: warming its Ray head failed: %s", self.session_id, exc)
            finally:
                self._warming = False

        threading.Thread(target=start, name=f"ray-warm-{self.session_id}", daemon=True).start()

    def _start(self) -> ClusterInfo:
        who = self.wall.lease
        # The kernel's uid, without the lease: the kernel's SessionWall gives the id back, once.
        identity = Identity(who.uid, who.gid, who.groups, "a session's Ray cluster") if who is not None else None
        tag = "".join(c if c.isalnum() else "_" for c in self.session_id)[:60] or "pool"
        name = f"ray-{tag}-{secrets.token_hex(3)}"
        session_memory = limits.part(self.wall.cgroup, "memory")
        groups: tuple[limits.Cgroup | None, ...]
        if session_memory is not None:
            # cgroup v1: the head and every worker and actor it starts are charged to the
            # session's own memory (CONSOLE_SESSION_MEMORY covers its kernel, its cell workers and
            # its cluster together), and sit in a pids group of their own: the one this object
            # stops and empties (never the session's, which holds the kernel), and which keeps a
            # fork storm in an actor from the kernel's process limit and the kernel's from it.
            self._cgroup = limits.make(self.cfg, name, None, _HEAD_PROCESSES, "the session's Ray cluster's",
                                       "CONSOLE_SESSION_MEMORY", None)
            groups = (self._cgroup, session_memory)
        else:
            # cgroup v2 (one folder for every controller, and a folder with processes cannot
            # have limited children), or no session cgroup: a memory group of its own, as big
            # as CONSOLE_RAY_MEMORY.
            self._cgroup = limits.make(self.cfg, name, limits.ray_memory(self.cfg), None,
                                       "the session's Ray cluster's", "CONSOLE_RAY_MEMORY", None)
            groups = (self._cgroup,)
        store = limits.parse_size(str(self.cfg.get("SESSION_OBJECT_STORE") or "512M"))
        wall = Wall(identity=identity, cgroups=groups, oom_score_adj=limits.RAY_OOM_SCORE_ADJ,
                    handoff=self.wall.handoff, shm_size=store + _SHM_SLACK)
        data_dir = Path(str(self.cfg.get("DATA_DIR") or "./console-data")).resolve()
        state_dir = data_dir / "ray"
        # The start log is written and read back (into the cell's error) by the server: never in a
        # folder the session writes, where a symlink planted by its kernel would aim the server's
        # writes and reads at any file. The private folder no sandbox sees.
        logs = data_dir / PRIVATE_DIR_NAME / "session-heads"
        logs.mkdir(mode=0o700, parents=True, exist_ok=True)
        log_path = self._log = logs / f"{tag}-{secrets.token_hex(3)}.log"

        def wrap(cmd: list[str]) -> tuple[list[str], tuple[int, ...]]:
            return sandbox.wrap(self.cfg, cmd, ray_temp_dir=self.temp_dir, session_id=self.session_id,
                                cwd=str(state_dir), wall=wall)

        try:
            # It never grows: no autoscaler monitor (~50 MB). Its Ray Client server would serve
            # nobody (the kernel drives it over the GCS address), but `ray start` has no way to
            # leave it out (no port means 10001, where a second session's failed to bind and
            # `ray start --block` then took the whole head down): a free port of its own.
            return start_head(self.temp_dir, num_cpus=self.cfg.get("RAY_NUM_CPUS"), client_port=_free_client_port(),
                              log_path=log_path, wrap=wrap, auth_token=secrets.token_hex(32),
                              object_store_memory=store, autoscaler=False)
        except BaseException:
            self._remove_cgroup()
            raise

    def stop(self, grace: float = 5.0) -> None:
        """Stop the head and everything it started; the temp dir goes too. Later ensure() refuses."""
        with self._lock:
            self._stopped = True
            self._stop_locked(grace)
            shutil.rmtree(self.root, ignore_errors=True)
            if self._log is not None:
                self._log.unlink(missing_ok=True)

    def _stop_locked(self, grace: float = 5.0) -> None:
        info, self._info = self._info, None
        if info is not None and info.pid and recorded_alive(info):
            stop_process_group(info.pid, grace=grace)
        self._remove_cgroup()

    def _remove_cgroup(self) -> None:
        group, self._cgroup = self._cgroup, None
        if group is None:
            return
        # Workers Ray started in groups of their own are still in the cgroup: they go too.
        for procs in group.procs_files():
            try:
                pids = [int(p) for p in procs.read_text().split()]
            except (OSError, ValueError):
                continue
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        group.remove(wait=3.0)


def _free_client_port() -> int:
    from console.cluster.procs import free_ports

    return free_ports(1)[0]


__all__ = ["SessionCluster", "per_session", "session_temp_dir", "wants_ray"]
