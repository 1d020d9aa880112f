"""Each sandbox's wall: who it runs as, the cgroup it is limited by, and the folders it shares.

Composes cluster/identity.py (uids), cluster/limits.py (cgroups) and the folders both need, into
the `Wall` cluster/sandbox.py puts on a command line:
- the Ray zone (the embedded head and its workers): the zone's uid, CONSOLE_RAY_MEMORY;
- a kernel session: a leased uid, CONSOLE_SESSION_MEMORY and CONSOLE_SESSION_PROCESSES, a private
  /dev/shm of CONSOLE_SESSION_SHM, and a hand-off folder its actors can read and no other
  session can (`/dev/shm/console-<data dir tag>/<uid>`, <uid>:<hand-off group> 2750).

Shared folders (the lake, the caches' parent, Ray's folders, the data roots) are made the members
group's, setgid and group-writable, by the server before a sandbox starts; only the folder
itself, what is already inside keeps its owner (docs/security.md: what the admin does).

Runs in: the server (kernels, the head) and the CLI's headless runs (the head).
"""
from __future__ import annotations

import hashlib
import logging
import os
import secrets
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from console.cluster import identity, limits
from console.cluster.identity import Identity
from console.cluster.limits import Cgroup
from console.cluster.sandbox import Wall, session_cache_dir

log = logging.getLogger(__name__)

HANDOFF_ENV = "MLSQL_HANDOFF_DIR"  # where a kernel writes the IPC files its actors map (kernel/ipcfiles.py)
_SHM = Path("/dev/shm")


def _data_dir(cfg: Mapping[str, Any]) -> Path:
    return Path(str(cfg.get("DATA_DIR") or "./console-data")).resolve()


def handoff_root(cfg: Mapping[str, Any]) -> Path:
    tag = hashlib.sha1(str(_data_dir(cfg)).encode()).hexdigest()[:10]
    return _SHM / f"console-{tag}"


def handoff_group(cfg: Mapping[str, Any]) -> int | None:
    """For a kernel outside the sandbox (a headless run, as root): the group its hand-off folder must
    give to the Ray zone, when the zone runs as a uid of its own; None otherwise."""
    if os.environ.get(HANDOFF_ENV) or not identity.available():
        return None
    from console.cluster import sandbox

    try:
        return identity.handoff_gid(cfg) if sandbox.enabled(cfg) else None
    except sandbox.SandboxUnavailable:
        return None


def share_folders(cfg: Mapping[str, Any], ray_temp_dir: Path) -> None:
    """The folders every sandbox writes to, made the members group's (setgid, group-writable)."""
    gid = identity.members_gid(cfg)
    data_dir = _data_dir(cfg)
    data_dir.mkdir(parents=True, exist_ok=True)
    mode = data_dir.stat().st_mode & 0o7777
    if mode & 0o011 != 0o011:  # enterable by the sandboxes' uids (its private folder stays 0700)
        os.chmod(data_dir, mode | 0o011)
    for folder in (data_dir / "lake", data_dir / "cache", data_dir / "ray", ray_temp_dir):
        identity.share_folder(folder, gid)
    # Notebook package layers (console/kernel/envs.py): any session builds one, sticky so that no
    # session removes, renames or replaces a layer another made (each layer is read-only inside).
    identity.share_folder(data_dir / "envs", gid, 0o3775)
    # Ray's temp dir holds the raylet's sockets: members only (no "other" bits), whatever its parent.
    identity.share_folder(ray_temp_dir, gid, 0o2770)
    for root in cfg.get("DATA_ROOTS") or []:
        if Path(root).is_dir():
            identity.share_folder(Path(root).resolve(), gid)
    root = handoff_root(cfg)
    root.mkdir(mode=0o711, exist_ok=True)
    os.chmod(root, 0o711)  # each session's folder is reached by its name, none is listed


def ray_zone(cfg: Mapping[str, Any], ray_temp_dir: Path) -> Wall:
    """The Ray zone's wall: its uid where this server may switch ids, and its memory cgroup."""
    who = identity.ray_zone(cfg) if identity.available() else None
    if who is not None:
        share_folders(cfg, ray_temp_dir)
    group = limits.make(cfg, "ray", limits.ray_memory(cfg), None, "the Ray zone's", "CONSOLE_RAY_MEMORY", None)
    return Wall(identity=who, cgroups=(group,), oom_score_adj=limits.RAY_OOM_SCORE_ADJ)


def open_ray_session(temp_dir: Path, zone: Identity | None = None) -> None:
    """After the head started: its session's folders writable by the members (drivers write their
    logs there), sticky, so no session removes or replaces what another made (the raylet's sockets).

    Ray makes most of them 0777 itself; a few it makes 0755 (logs/events, where every driver
    writes its event log, made by whichever process comes first, sometimes after the node is up),
    so that one is made here first when missing, the zone's, setgid, for the members group.
    """
    latest = temp_dir / "session_latest"
    sessions = [latest.resolve()] if latest.exists() else sorted(
        temp_dir.glob("session_2*"), key=lambda p: p.stat().st_mtime)[-1:]
    if not sessions:
        return
    events = sessions[-1] / "logs" / "events"
    if zone is not None and not events.exists():
        events.mkdir(parents=True, exist_ok=True)
        os.chown(events, zone.uid, zone.gid)
        os.chmod(events, 0o3775)
    for folder, subdirs, _ in os.walk(sessions[-1]):
        for path in [folder, *(os.path.join(folder, d) for d in subdirs)]:
            try:
                mode = os.stat(path).st_mode & 0o7777
                if mode & 0o1070 != 0o1070:
                    os.chmod(path, mode | 0o1070)
            except OSError:
                continue


@dataclass
class SessionWall:
    """A kernel session's wall, held while its kernel lives; release() gives back its id and folders."""

    wall: Wall
    env: dict[str, str] = field(default_factory=dict)  # what the kernel needs to know of its wall
    lease: Identity | None = None
    cgroup: Cgroup | None = None
    handoff: Path | None = None

    def release(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove(wait=2.0)  # the last SIGKILLed processes may take a moment to leave
        if self.handoff is not None:
            shutil.rmtree(self.handoff, ignore_errors=True)
            try:
                self.handoff.parent.rmdir()  # the data dir's folder on /dev/shm, once no session has one
            except OSError:
                pass
        if self.lease is not None:
            self.lease.release()


def session(cfg: Mapping[str, Any], session_id: str, sandboxed: bool, ray_temp_dir: Path) -> SessionWall:
    """Lease an id, make the cgroup and the folders of one kernel session (undo with release())."""
    if not (sandboxed and identity.available()):
        # A fresh name per start: counters (OOM kills, refused forks) then speak of this kernel only.
        group = _session_group(cfg, session_id)
        return SessionWall(Wall(cgroups=(group,)), cgroup=group)
    held = _leased(cfg, session_id, ray_temp_dir)
    try:
        adopt(cfg, held, session_id)
    except BaseException:
        held.release()
        raise
    return held


def pooled(cfg: Mapping[str, Any], ray_temp_dir: Path) -> SessionWall:
    """A sandboxed session's wall made before any session asks (cluster/head_pool.py): a leased id,
    the session cgroup and the hand-off folder; adopt() gives it to a session."""
    return _leased(cfg, "", ray_temp_dir)


def adopt(cfg: Mapping[str, Any], held: SessionWall, session_id: str) -> None:
    """The session's cache folder becomes the wall's uid's (all of it, when an earlier lease made it)."""
    if held.lease is not None:
        _own_tree(session_cache_dir(_data_dir(cfg), session_id), held.lease.uid, held.lease.gid)


def _session_group(cfg: Mapping[str, Any], session_id: str) -> Cgroup | None:
    return limits.make(cfg, f"session-{_safe(session_id or 'pool')}-{secrets.token_hex(3)}", limits.session_memory(cfg),
                       limits.session_processes(cfg), "the session's", "CONSOLE_SESSION_MEMORY",
                       "CONSOLE_SESSION_PROCESSES")


def _leased(cfg: Mapping[str, Any], session_id: str, ray_temp_dir: Path) -> SessionWall:
    group = _session_group(cfg, session_id)
    data_dir = _data_dir(cfg)
    share_folders(cfg, ray_temp_dir)
    # A session's own id is tried first (a restart usually gets its uid back: no cache to chown);
    # a pooled wall takes the first free one.
    who = identity.lease_session(cfg, data_dir / "server", prefer=session_id)
    try:
        handoff = handoff_root(cfg) / str(who.uid)
        shutil.rmtree(handoff, ignore_errors=True)  # an earlier lease's leftovers
        identity.own_folder(handoff, who.uid, identity.handoff_gid(cfg), 0o2750)
    except BaseException:
        who.release()
        if group is not None:
            group.remove()
        raise
    shm = limits.parse_size(str(cfg.get("SESSION_SHM") or "1G"))
    wall = Wall(identity=who, cgroups=(group,), handoff=handoff, shm_size=shm)
    return SessionWall(wall, {HANDOFF_ENV: str(handoff)}, who, group, handoff)


def _own_tree(folder: Path, uid: int, gid: int) -> None:
    """The session's cache folder becomes its uid's; its content too when an earlier lease made it."""
    folder.mkdir(parents=True, exist_ok=True)
    st = folder.stat()
    if (st.st_uid, st.st_gid) != (uid, gid):
        for top, dirs, files in os.walk(folder):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(top, name), uid, gid)
        os.chown(folder, uid, gid)
    os.chmod(folder, 0o700)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80]


__all__ = ["HANDOFF_ENV", "SessionWall", "adopt", "handoff_group", "handoff_root", "open_ray_session", "pooled",
           "ray_zone", "session", "share_folders"]
