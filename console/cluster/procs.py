"""Processes and ports on this machine, named for good: what the Ray head code (head.py), the
kernel's cell workers and the tests start, find and stop.

A pid names a process only while that process lives: this machine reuses pids within minutes
(pid_max 32768), so a pid kept past its process's life is checked against the process's start
time (process_start) before it is signalled or reaped.
"""
from __future__ import annotations

import os
import signal
import socket
import time


def free_port(host: str = "127.0.0.1") -> int:
    return free_ports(1, host)[0]


def free_ports(n: int, host: str = "127.0.0.1", avoid: tuple[int, ...] = ()) -> list[int]:
    """n distinct free ports: held open together while chosen, so two picks cannot be one port
    (Ray refuses to start when two of its components got the same number)."""
    socks: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < n:
            s = socket.socket()
            socks.append(s)  # held until all are chosen, an avoided one too (the next bind differs)
            s.bind((host, 0))
            if s.getsockname()[1] not in avoid:
                ports.append(s.getsockname()[1])
        return ports
    finally:
        for s in socks:
            s.close()


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def stat_fields(pid: int | str) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (which may hold spaces and parentheses):
    [0] state, [1] ppid, [2] process group, [11] utime, [12] stime (ticks), [19] start time
    (ticks since boot), [21] resident pages. None when there is no such process (or it ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 21 else None


def all_stat_fields() -> dict[int, list[str]]:
    """stat_fields of every process this one can see, by pid."""
    out: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields is not None:
                out[int(entry)] = fields
    return out


def process_start(pid: int) -> int | None:
    """When the process pid started (clock ticks since boot); None when there is none.

    With the pid it names one process for good: pids are reused (a long-lived server starts
    thousands of processes), and signalling or reaping a recorded pid that now belongs to another
    process (a kernel) would kill that one and steal its exit status.
    """
    fields = stat_fields(pid)
    try:
        return int(fields[19]) if fields is not None else None
    except ValueError:
        return None


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still "exists"; treat it as dead.
    fields = stat_fields(pid)
    return fields is None or fields[0] != "Z"  # unreadable: it answered kill(0), so it lives


def stop_process_group(pid: int, grace: float = 10.0) -> None:
    """SIGTERM the process group led by pid, SIGKILL whatever is left after `grace` seconds."""
    try:
        pgid = os.getpgid(pid)
    except ProcessLookupError:
        return
    if pgid != pid:  # only ever signal a group we created (start_new_session makes pid the leader)
        pgid = pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _group_alive(pgid):
            break
        _reap(pid)
        time.sleep(0.2)
    else:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _reap(pid)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # killpg(0) succeeds while zombies remain; look for a live member.
    return any(fields[2] == str(pgid) and fields[0] != "Z" for fields in all_stat_fields().values())


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


__all__ = ["all_stat_fields", "free_port", "free_ports", "pid_alive", "port_open", "process_start", "stat_fields",
           "stop_process_group"]
