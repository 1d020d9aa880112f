"""Finding, from the host, processes that print their pid from inside a sandbox.

A sandboxed kernel, its cell worker and the Ray workers of its head run in a PID namespace, so
`os.getpid()` in a cell and the `pid=` Ray puts before an actor's lines are pids of that
namespace. Looked up as host pids they name unrelated processes (or none, which made a test
pass whatever happened). /proc/<pid>/status's NSpid line gives a process's pid in each namespace
it is in, its own namespace's last.
"""
from __future__ import annotations

import os

from console.cluster.procs import process_start

Proc = tuple[int, int]  # (host pid, start time): one process for good, whatever reuses its pid


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = _parent(pid)
    return False


def host_processes(ns_pids: set[int], cmdline: str = "", under: int | None = None) -> set[Proc]:
    """The host processes whose innermost pid is in `ns_pids`, whose command line starts with
    `cmdline`, and (given `under`) that descend from the host pid `under`."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/status") as fh:
                nspid = next((line.split()[1:] for line in fh if line.startswith("NSpid:")), [])
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if (nspid and int(nspid[-1]) in ns_pids and command.startswith(cmdline)
                and (under is None or _descends(pid, under))):
            start = process_start(pid)
            if start is not None:
                found.add((pid, start))
    return found


def running(proc: Proc) -> bool:
    """Alive (not a zombie) and still the same process."""
    pid, start = proc
    try:
        with open(f"/proc/{pid}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
    except OSError:
        return False
    return process_start(pid) == start
