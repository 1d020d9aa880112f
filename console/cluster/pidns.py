"""The one PID namespace every sandbox of a data dir joins: kernels, their workers and the Ray head.

Why one and not one per sandbox: a Ray driver (a cell worker) finds its node by looking for the
raylet among the processes it can see (ray._private.services.find_node_ids greps for
`--node_id`), so a worker must see the head's raylet. Why not the host's: there a cell would see
the server, and /proc/<server>/environ and /proc/<server>/fd would hand it the store.

The namespace is held by a small bubblewrap process (`cat` reading a pipe whose other end only
its creator holds): when the creator exits, the holder reads EOF, its namespace's init exits, and
the kernel SIGKILLs everything left in it. Its record lives in the private folder, where no
sandboxed process can forge it into pointing at the host's namespace.

The holder is as walled as any sandbox (sandbox.holder_argv): the same covers, nothing writable,
and a uid of its own (cluster/identity.py), so no process of the namespace can enter
/proc/1/root, trace it or signal its `cat` (which would end every sandbox at once).

Runs in: the server, and whatever starts an embedded head (a headless run, the tests' fixture).
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from console.cluster.procs import stat_fields

_RECORD = "sandbox-pidns.json"
_mine: dict[str, tuple[int, int]] = {}  # record path -> (child pid, namespace fd) opened by this process
_write_ends: list[int] = []  # the holders' pipes this process keeps open for its lifetime
_retired: list[int] = []  # namespace descriptors of holders that died, never closed (namespace_fd says why)
_guard = threading.Lock()


HolderCommand = Callable[[], tuple[list[str], list[str]]]  # (bwrap and its options, what runs inside)


def namespace_fd(private_dir: Path, holder: HolderCommand) -> int:
    """An open descriptor of the data dir's shared PID namespace, starting its holder if none lives."""
    record = private_dir / _RECORD
    with _guard, _locked(private_dir):
        cached = _mine.get(str(record))
        if cached is not None and _is_holder_child(cached[0]):
            return cached[1]
        child = _read(record)
        if child is None or not _is_holder_child(child):
            child = _start_holder(*holder())
            tmp = record.with_suffix(".tmp")
            tmp.write_text(json.dumps({"child": child}))
            tmp.replace(record)
        fd = os.open(f"/proc/{child}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        if cached is not None:
            # Not closed: a caller may hold the old number between our return and its Popen
            # (pass_fds), and a close here would hand that number to whatever opens next. One
            # descriptor kept per holder that died, which is rare (it is killed only with the server).
            _retired.append(cached[1])
        _mine[str(record)] = (child, fd)
        return fd


def _start_holder(bwrap: list[str], inside: list[str]) -> int:
    stdin_r, stdin_w = os.pipe()
    info_r, info_w = os.pipe()
    argv = [*bwrap, "--info-fd", str(info_w), "--", *inside]
    try:
        subprocess.Popen(argv, stdin=stdin_r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         pass_fds=(info_w,), start_new_session=True)
    finally:
        os.close(stdin_r)
        os.close(info_w)
    os.set_inheritable(stdin_w, False)
    _write_ends.append(stdin_w)  # never closed: the namespace lives as long as this process
    data = b""
    with os.fdopen(info_r, "rb") as fh:
        while not data.rstrip().endswith(b"}"):
            chunk = fh.read1(4096)
            if not chunk:
                raise RuntimeError("the sandbox's PID namespace holder did not start")
            data += chunk
    return int(json.loads(data)["child-pid"])


def _is_holder_child(pid: int) -> bool:
    """pid lives, is a bwrap (the namespace's init), and its namespace is not ours (never the host's)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if not os.path.basename(fh.read().split(b"\0", 1)[0]).startswith(b"bwrap"):
                return False
        fields = stat_fields(pid)
        if fields is None or fields[0] == "Z":
            return False
        return os.stat(f"/proc/{pid}/ns/pid").st_ino != os.stat("/proc/self/ns/pid").st_ino
    except (OSError, IndexError):
        return False


def _read(record: Path) -> int | None:
    try:
        child = json.loads(record.read_text()).get("child")
    except (OSError, ValueError, AttributeError):
        return None
    return child if isinstance(child, int) else None


@contextmanager
def _locked(private_dir: Path) -> Iterator[None]:
    private_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(private_dir / "sandbox-pidns.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
