"""What one session may take: memory, processes, kernels per user; and the sentence when it took too much.

Limits are cgroups: a session (its kernel and cell workers) gets one with CONSOLE_SESSION_MEMORY
and CONSOLE_SESSION_PROCESSES, the Ray zone (the embedded head and all its workers) one with
CONSOLE_RAY_MEMORY. They sit below the server's own cgroup, in a folder per data dir: with cgroup
v1 (this machine's `memory` and `pids` hierarchies) one directory per controller, with v2 one.
A process enters its cgroup before it execs the sandbox (`launcher`), so nothing it starts is
ever outside. tmpfs pages (/dev/shm, the private /tmp) are charged to the cgroup that wrote them,
so a session's hand-off files count against its memory too.

Past the memory limit the kernel's OOM killer stops the cgroup's largest process (a cell
worker, usually; the kernel then starts a new one at the next cell), and nothing outside the
cgroup: the server runs with a low oom_score_adj, sandboxes with a high one. Past the process
limit fork fails (EAGAIN) inside the session only. Either way the cell's error says which limit
and its size (`note`, read by the kernel from its own cgroup; `explain`, read by the server when
a kernel died).

Runs in: the server (making, entering, removing cgroups) and the kernel (`note`, which only reads).
"""
from __future__ import annotations

import hashlib
import logging
import os
import shlex
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from console.config import parse_size as config_parse_size
from console.config import parse_size_or_percent as config_parse_size_or_percent

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
SERVER_OOM_SCORE_ADJ = -500  # the server is the last thing the OOM killer should pick
SANDBOX_OOM_SCORE_ADJ = 1000  # a session's processes are the first
RAY_OOM_SCORE_ADJ = 800  # the Ray zone serves every session: after a runaway session, before the server
HOLDER_OOM_SCORE_ADJ = -500  # tiny, and its death ends every sandbox

# The parsers live with the settings they check (console/config.py); named here too for this room.
parse_size = config_parse_size
parse_size_or_percent = config_parse_size_or_percent


def human(size: int) -> str:
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor:
            return f"{size / factor:.3g} {unit}"
    return f"{size} bytes"


def machine_memory() -> int:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def ray_memory(cfg: Mapping[str, Any]) -> int:
    value = str(cfg.get("RAY_MEMORY") or "70%").strip()
    if value.endswith("%"):
        return int(machine_memory() * float(value[:-1]) / 100)
    return parse_size(value)


def session_memory(cfg: Mapping[str, Any]) -> int:
    value = cfg.get("SESSION_MEMORY")
    return parse_size(str(value)) if value not in (None, "") else 4 << 30


def session_processes(cfg: Mapping[str, Any]) -> int:
    return int(cfg.get("SESSION_PROCESSES") or 256)


# ------------------------------------------------------------------ cgroups
def _v2() -> bool:
    return (CGROUP_ROOT / "cgroup.controllers").exists()


def _own_paths() -> dict[str, str]:
    """This process's cgroup per controller (v1), or under "" (v2)."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for c in controllers.split(",") if controllers else [""]:
                    out[c] = path
    except OSError:
        pass
    return out


@dataclass(frozen=True)
class Cgroup:
    """One cgroup across the controllers used: {controller: its directory} (v2: one directory for both)."""

    dirs: tuple[tuple[str, Path], ...]
    what: str  # "the session's" / "the Ray zone's": how a message names it
    memory_setting: str
    processes_setting: str | None

    def _dir(self, controller: str) -> Path | None:
        for c, path in self.dirs:
            if c == controller or c == "":
                return path
        return None

    def procs_files(self) -> list[Path]:
        return sorted({path / "cgroup.procs" for _, path in self.dirs})

    def memory_limit(self) -> int | None:
        d = self._dir("memory")
        if d is None:
            return None
        text = _read(d / ("memory.max" if self.v2 else "memory.limit_in_bytes")).strip()
        return int(text) if text.isdigit() and int(text) < (1 << 60) else None

    def memory_usage(self) -> int | None:
        """Bytes the group's processes use now (the Running page shows it), None when unreadable."""
        d = self._dir("memory")
        text = _read(d / ("memory.current" if self.v2 else "memory.usage_in_bytes")).strip() if d else ""
        return int(text) if text.isdigit() else None

    def resident_bytes(self) -> int:
        """Resident memory of the group's processes now: what a group without a memory controller
        of its own (a session's head on cgroup v1, charged to its session) holds."""
        total = 0
        for procs in self.procs_files():
            for pid in _read(procs).split():
                fields = _read(Path(f"/proc/{pid}/statm")).split()
                total += int(fields[1]) * os.sysconf("SC_PAGE_SIZE") if len(fields) > 1 else 0
        return total

    def cpu_seconds(self) -> float | None:
        """CPU time the group's processes used so far (cgroup v2's cpu.stat; None on v1)."""
        d = self._dir("cpu")
        if d is None or not self.v2:
            return None
        return _counter(_read(d / "cpu.stat"), "usage_usec") / 1e6

    def processes_limit(self) -> int | None:
        d = self._dir("pids")
        text = _read(d / "pids.max").strip() if d is not None else ""
        return int(text) if text.isdigit() else None

    @property
    def v2(self) -> bool:
        return any(c == "" for c, _ in self.dirs)

    def oom_kills(self) -> int:
        d = self._dir("memory")
        if d is None:
            return 0
        return _counter(_read(d / ("memory.events" if self.v2 else "memory.oom_control")), "oom_kill")

    def fork_refusals(self) -> int:
        d = self._dir("pids")
        return _counter(_read(d / "pids.events"), "max") if d is not None else 0

    def remove(self, wait: float = 0.0) -> None:
        """Remove it once empty, waiting up to `wait` seconds for its last processes to go."""
        deadline = time.monotonic() + wait
        for _, path in self.dirs:
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() >= deadline:
                        log.warning("cgroup %s still has processes; left in place", path)
                        break
                    time.sleep(0.05)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _counter(text: str, name: str) -> int:
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0


def _group_dir(cfg: Mapping[str, Any], controller: str, own: str) -> Path:
    tag = hashlib.sha1(str(Path(str(cfg.get("DATA_DIR") or "./console-data")).resolve()).encode()).hexdigest()[:10]
    base = CGROUP_ROOT if controller == "" else CGROUP_ROOT / controller
    return base / own.lstrip("/") / f"console-{tag}"


def make(cfg: Mapping[str, Any], name: str, memory: int | None, processes: int | None, what: str,
         memory_setting: str, processes_setting: str | None) -> Cgroup | None:
    """Create (or reuse) the cgroup `name` under this data dir's folder with these limits; None where
    this machine gives us no cgroups to write (then nothing is limited, and check_startup said so)."""
    own = _own_paths()
    wanted = [c for c, limit in (("memory", memory), ("pids", processes)) if limit is not None]
    dirs: list[tuple[str, Path]] = []
    try:
        if _v2():
            parent = _group_dir(cfg, "", own.get("", "/"))
            parent.mkdir(parents=True, exist_ok=True)
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
            path = parent / name
            path.mkdir(exist_ok=True)
            dirs = [("", path)]
            if memory is not None:
                (path / "memory.max").write_text(str(memory))
                (path / "memory.swap.max").write_text("0")
            if processes is not None:
                (path / "pids.max").write_text(str(processes))
        else:
            for c in wanted:
                if not (CGROUP_ROOT / c).is_dir() or c not in own:
                    continue
                path = _group_dir(cfg, c, own[c]) / name
                path.mkdir(parents=True, exist_ok=True)
                dirs.append((c, path))
                if c == "memory":
                    (path / "memory.limit_in_bytes").write_text(str(memory))
                    memsw = path / "memory.memsw.limit_in_bytes"  # no swapping past the limit either
                    if memsw.exists():
                        memsw.write_text(str(memory))
                elif c == "pids":
                    (path / "pids.max").write_text(str(processes))
    except OSError as exc:
        log.warning("no cgroup for %s (%s): its limits are not enforced", what, exc)
        for _, path in dirs:
            try:
                path.rmdir()
            except OSError:
                pass
        return None
    return Cgroup(tuple(dirs), what, memory_setting, processes_setting) if dirs else None


def part(group: Cgroup | None, controller: str) -> Cgroup | None:
    """One controller's folder of a cgroup v1 group, alone: a process written there is limited by
    that controller of `group` and stays in its own group for the others. None on v2 (one folder
    holds every controller) or when the group has no such controller."""
    if group is None or group.v2:
        return None
    dirs = tuple((c, path) for c, path in group.dirs if c == controller)
    return Cgroup(dirs, group.what, group.memory_setting, None) if dirs else None


def unavailable_reason() -> str | None:
    """None when this process can make cgroups with memory and pids limits; otherwise why not."""
    own = _own_paths()
    if _v2():
        parent = CGROUP_ROOT / own.get("", "/").lstrip("/")
        return None if os.access(parent, os.W_OK) else f"the cgroup {parent} is not writable"
    missing = [c for c in ("memory", "pids") if not (CGROUP_ROOT / c).is_dir() or c not in own]
    if missing:
        return f"no cgroup v1 {' or '.join(missing)} hierarchy is mounted"
    parent = CGROUP_ROOT / "memory" / own["memory"].lstrip("/")
    return None if os.access(parent, os.W_OK) else f"the cgroup {parent} is not writable"


OPENED_FD = "{opened-fd}"  # in a launcher's command: replaced by the descriptor it opened (open_file)


def launcher(groups: Iterable[Cgroup | None], oom_score_adj: int, umask: int | None,
             open_file: Path | None = None) -> list[str]:
    """A prefix that moves itself into the cgroups, sets its OOM score and umask, then execs the rest.

    open_file: opened read-only on a descriptor the process does not hold yet (3 to 9), whose
    number replaces OPENED_FD in the command it execs (bwrap's `--seccomp {opened-fd}`: a fresh
    descriptor per start, so no offset is shared, and bwrap closes it). Never a fixed number:
    the process also holds what Popen passed it (a kernel's command pipe), with whatever numbers
    those had in the server, and opening onto one of them replaced it (the kernel then read
    EBADF from its command pipe and stopped, "exited with code 0").

    A shell (one exec, ~1 ms): the process enters before it starts anything, so no child of it
    is ever outside; a failed write stops the start (exit 97) instead of running unlimited.
    """
    steps = [f"echo 0 > {shlex.quote(str(f))}" for g in groups if g is not None for f in g.procs_files()]
    if umask is not None:
        steps.append(f"umask {umask:03o}")
    if open_file is not None:
        steps += ["n=3", "while [ -e /proc/$$/fd/$n ]; do n=$((n + 1)); done", '[ "$n" -le 9 ]',
                  f'eval "exec $n< {shlex.quote(str(open_file))}"',
                  # the command's OPENED_FD becomes $n (POSIX sh: rebuild "$@" argument by argument)
                  f'for a do shift; if [ "$a" = {shlex.quote(OPENED_FD)} ]; then a=$n; fi; set -- "$@" "$a"; done']
    # The OOM score is a preference, not a wall: where the kernel refuses a value (some refuse a
    # negative one even to root) the start goes on.
    script = (" && ".join(steps) + " || exit 97\n" if steps else "") + \
        f"{{ echo {oom_score_adj} > /proc/self/oom_score_adj; }} 2>/dev/null\nexec \"$@\""
    return [shutil.which("sh") or "/bin/sh", "-c", script, "sh"]


def protect_server() -> None:
    """The server itself: the last process of this data dir the OOM killer picks."""
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write(str(SERVER_OOM_SCORE_ADJ))
    except OSError as exc:  # lowering it needs CAP_SYS_RESOURCE
        log.warning("cannot lower the server's oom_score_adj: %s", exc)


# ------------------------------------------------------------------ messages
def explain(group: Cgroup | None, seen_oom: int = 0, seen_forks: int = 0) -> str | None:
    """Which limit of `group` was hit since the counters were (seen_oom, seen_forks); None if none."""
    if group is None:
        return None
    if group.oom_kills() > seen_oom:
        limit = group.memory_limit()
        size = human(limit) if limit else "its size"
        return (f"{group.what} memory limit ({group.memory_setting} = {size}) was reached, so its largest "
                "process was stopped")
    if group.processes_setting and group.fork_refusals() > seen_forks:
        return (f"{group.what} process limit ({group.processes_setting} = {group.processes_limit()}) was "
                "reached: no new process or thread could start")
    return None


def own_cgroup() -> Cgroup | None:
    """The cgroup this process runs in, read-only, when it is a session's (a kernel asks after a death)."""
    own = _own_paths()
    dirs: list[tuple[str, Path]] = []
    if _v2():
        path = CGROUP_ROOT / own.get("", "/").lstrip("/")
        if path.name.startswith("session-"):
            dirs.append(("", path))
    else:
        for c in ("memory", "pids"):
            path = CGROUP_ROOT / c / own.get(c, "/").lstrip("/")
            if c in own and path.name.startswith("session-"):
                dirs.append((c, path))
    if not dirs:
        return None
    return Cgroup(tuple(dirs), "the session's", "CONSOLE_SESSION_MEMORY", "CONSOLE_SESSION_PROCESSES")


_noted = {"oom": 0, "forks": 0}


def note() -> str | None:
    """In a kernel: the limit its session passed since the last call, as a sentence; None if none."""
    group = own_cgroup()
    if group is None:
        return None
    said = explain(group, _noted["oom"], _noted["forks"])
    _noted["oom"], _noted["forks"] = group.oom_kills(), group.fork_refusals()
    return said


__all__ = ["Cgroup", "explain", "human", "launcher", "make",
           "note", "own_cgroup", "parse_size", "parse_size_or_percent", "protect_server", "ray_memory",
           "session_memory", "session_processes", "unavailable_reason"]
