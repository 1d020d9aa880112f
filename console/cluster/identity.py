"""Who sandboxed code runs as: a uid and gid per kernel session, one for the Ray zone, one for the holder.

The isolation unit is the kernel session (a kernel and its cell workers). Each runs under a uid
and gid of its own, leased from a pool while it lives, never the server's and never another
session's: the kernel's own checks (ptrace_may_access) then refuse /proc/<pid>/{root,cwd,fd,
environ,mem,map_files}, ptrace, process_vm_readv and signals across sessions and towards the
server, the Ray head and the PID namespace's holder.

The ids, from a base B: CONSOLE_SANDBOX_UID_BASE when set, else the block of 8192 ids this data
dir holds in the machine's registry (/var/lib/mlsql-console/uid-blocks: 300000, 308192, …), so two
servers on one machine never share an id, a group or a hand-off folder:
- B      the PID namespace's holder (cluster/pidns.py): nobody else runs as it, so nobody signals it;
- B + 1  the Ray zone: the embedded head and every Ray worker (actors of all sessions share it);
- B + 2  the members group: the Ray zone's primary group and every session's supplementary one.
         The lake, the caches and Ray's temp dir belong to it (setgid folders, umask 002), so what
         one session saves another may read and replace, and drivers reach the raylet's sockets;
- B + 3  the hand-off readers: the Ray zone's second group. A session's hand-off folder (the IPC
         files its actors map) is <session uid>:<B + 3> 0750: the actors read it, other sessions not;
- B + 16 and up: the sessions' pool (uid = gid).

Leases are flock'ed files in the private folder, held by the server while the session lives, so
two servers on one data dir never hand out one id; an id still used by a process (an orphan of a
crashed server) is skipped.

Only a root server can switch ids (setpriv inside the sandbox, which keeps just CAP_SETUID/SETGID
until then). A server running as an ordinary user runs every sandbox under its own uid, and
check_startup says so.

Runs in: the server (kernels, the head, the holder) and the CLI's headless runs (the head).
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_BASE = 300000
POOL_OFFSET = 16
POOL_SIZE = 4096
UMASK = 0o002  # files of sessions and of the Ray zone are group-writable by the members group
_LEASES = "ids"
_guard = threading.Lock()


@dataclass(frozen=True)
class Identity:
    """The uid, primary gid and supplementary groups a sandboxed process runs as."""

    uid: int
    gid: int
    groups: tuple[int, ...] = ()
    what: str = ""
    lease_fd: int | None = field(default=None, compare=False)

    def setpriv(self) -> list[str]:
        """The command prefix that becomes this identity, inside the sandbox, with no way back.

        --no-new-privs: no setuid binary in the sandbox gives root back; --inh-caps and the
        bounding set: nothing survives the exec either.
        """
        groups = f"--groups={','.join(map(str, self.groups))}" if self.groups else "--clear-groups"
        return [shutil.which("setpriv") or "setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", groups,
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]

    def release(self) -> None:
        """Give the id back to the pool (a session's; the fixed ones hold no lease). Safe to call again:
        a second os.close of the number would close whatever the process opened on it since."""
        with _guard:
            fd = self.lease_fd
            if fd is None:
                return
            object.__setattr__(self, "lease_fd", None)  # frozen for its ids; the lease is what changes
        try:
            os.close(fd)
        except OSError:
            pass


def available() -> bool:
    """Whether this process may switch ids: only root can, and setpriv must be installed."""
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


BLOCK_STRIDE = 8192  # ids per server: POOL_OFFSET + POOL_SIZE, rounded up
MAX_BLOCKS = 4096
REGISTRY = Path("/var/lib/mlsql-console/uid-blocks")  # machine-wide: which data dir holds which block
_bases: dict[str, int] = {}


def base(cfg: Mapping[str, Any]) -> int:
    """The first id of this server's block: CONSOLE_SANDBOX_UID_BASE when set, else a block of its own.

    Two servers on one machine (two data dirs) must never share an id or a group (issue 29): with
    one default base, one server's Ray zone was another's, and its members group could write the
    other's lake. So an unset base means "the block this data dir holds in the machine's registry".
    """
    explicit = int(cfg.get("SANDBOX_UID_BASE") or 0)
    if explicit:
        return explicit
    data_dir = str(Path(str(cfg.get("DATA_DIR") or "./console-data")).resolve())
    known = _bases.get(data_dir)
    if known is None:
        known = _bases[data_dir] = DEFAULT_BASE + BLOCK_STRIDE * claim_block(data_dir)
    return known


def claim_block(data_dir: str, registry: Path | None = None) -> int:
    """The registry's block number for data_dir: the one it holds, else the first free or stale one.

    A block is a file named by its number holding the data dir's path. One whose data dir is gone
    is taken over (its ids own nothing any more that a server could find). The claim holds a lock
    on the registry, so two servers starting together never take one block.
    """
    folder = registry or REGISTRY
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = os.open(folder / ".lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stale = None
        for k in range(MAX_BLOCKS):
            entry = folder / str(k)
            try:
                holder_dir = entry.read_text(encoding="utf-8")
            except FileNotFoundError:
                k = stale if stale is not None else k  # a stale block first: the registry stays short
                return _take(folder / str(k), data_dir, k)
            if holder_dir == data_dir:
                return k
            if stale is None and not os.path.isdir(holder_dir):
                stale = k
        if stale is not None:
            return _take(folder / str(stale), data_dir, stale)
        raise RuntimeError(f"all {MAX_BLOCKS} id blocks of {folder} are held by live data dirs; "
                           "set CONSOLE_SANDBOX_UID_BASE")
    finally:
        os.close(lock)


def _take(entry: Path, data_dir: str, k: int) -> int:
    tmp = entry.with_name(f".{entry.name}.new")
    tmp.write_text(data_dir, encoding="utf-8")
    os.replace(tmp, entry)
    return k


def members_gid(cfg: Mapping[str, Any]) -> int:
    return base(cfg) + 2


def handoff_gid(cfg: Mapping[str, Any]) -> int:
    return base(cfg) + 3


def holder(cfg: Mapping[str, Any]) -> Identity:
    b = base(cfg)
    return Identity(b, b, (), "the PID namespace's holder")


def ray_zone(cfg: Mapping[str, Any]) -> Identity:
    b = base(cfg)
    return Identity(b + 1, b + 2, (b + 3,), "the Ray zone")


def lease_session(cfg: Mapping[str, Any], private_dir: Path, prefer: str = "") -> Identity:
    """A free uid of the pool for one kernel session, held until release().

    prefer: the session's id; the uid it hashes to is tried first, so a session that restarts
    usually gets its uid back and its cache folder needs no new owner.
    """
    b = base(cfg)
    folder = private_dir / _LEASES
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    first = int(hashlib.sha1(prefer.encode()).hexdigest(), 16) % POOL_SIZE if prefer else 0
    with _guard:
        busy = _uids_in_use()
        for step in range(POOL_SIZE):
            uid = b + POOL_OFFSET + (first + step) % POOL_SIZE
            if uid in busy:
                continue
            fd = os.open(folder / str(uid), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            return Identity(uid, uid, (b + 2,), "a session", fd)
    raise RuntimeError(f"all {POOL_SIZE} sandbox ids from {b + POOL_OFFSET} are in use; stop some kernels")


def _uids_in_use() -> set[int]:
    """The uids of the processes this one can see (a /proc entry belongs to its process's uid)."""
    seen: set[int] = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                seen.add(entry.stat().st_uid)
            except OSError:
                continue
    return seen


def share_folder(folder: Path, gid: int, mode: int = 0o2775) -> None:
    """Make a folder the members group's: setgid (what is made inside stays the group's), group-writable.

    Only the folder itself: what is already inside keeps its owner (the admin's part, see
    docs/security.md). Folders a sandbox writes to are made here by the server, before it starts.
    """
    folder.mkdir(parents=True, exist_ok=True)
    st = folder.stat()
    if st.st_gid != gid:
        os.chown(folder, -1, gid)
    if stat.S_IMODE(st.st_mode) != mode:
        os.chmod(folder, mode)


def own_folder(folder: Path, uid: int, gid: int, mode: int) -> None:
    """A folder only this identity (and the group gid) may use: a session's cache or hand-off folder."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chown(folder, uid, gid)
    os.chmod(folder, mode)


__all__ = ["Identity", "UMASK", "available", "base", "claim_block", "handoff_gid", "holder", "lease_session",
           "members_gid", "own_folder", "ray_zone", "share_folder"]
