"""The kernel's Arrow IPC copies of the tables Python cells read, reused while the table lives.

Handing a table to the worker costs one write of its bytes into /dev/shm; the worker and every
actor on the node then memory-map that file. A notebook re-runs cells on the same table (catalog
tables are immutable Arrow objects, and `session.lookup` returns the same object until the name
is rebound), so the file is kept for the table object that produced it and a later cell on it
pays no write. Files leave when their table is garbage-collected (a weak-reference callback),
when evicted (most recent `keep` tables), and at shutdown.

Where the time went: writing into fresh tmpfs pages makes the kernel allocate and zero every
4 KiB page first, and under memory pressure from other processes that cost 0.15 to 1.2 s for
377 MB where the copy itself is 0.08 s. So a file whose table is gone is not unlinked at once:
it becomes a spare, and the next table is written over the spare's pages (no O_TRUNC, then
ftruncate to the new length): a plain copy into memory that is already there.

A spare is only rewritten when nobody maps it. Readers (the worker and actors, see
console/actors/data.py `map_locked`) hold flock(LOCK_SH) on the file for as long as their mapping
lives; the kernel takes LOCK_EX without waiting and skips a spare it cannot lock. A reader that
opened a path just before it became a spare notices (the path no longer names its inode) and
treats the file as gone. Spares are capped (count and bytes) and removed at shutdown.

A kernel killed before its shutdown leaves its folder behind; the folder name carries the
kernel's PID, so the next runtime started on the machine removes folders whose process is gone
(/dev/shm is memory).
"""
from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import tempfile
import threading
import uuid
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa

from console.kernel.catalog import Entry, LazyTable

log = logging.getLogger(__name__)

PREFIX = "mlsqlpy-"
_OWNED = re.compile(re.escape(PREFIX) + r"(\d+)-")
KEEP_TABLES = 2  # an input and a model table of the same cell both stay
MAX_KEPT_BYTES = 4 << 30  # bigger tables are written per job and removed when it ends
MAX_SPARES = 2  # files of dead tables kept for their pages
MAX_SPARE_BYTES = 2 << 30  # beyond this a dead table's file is unlinked: memory back at once


class IpcFiles:
    """IPC files of live tables in `folder`, keyed by table identity (a weak reference)."""

    def __init__(self, folder: Path, keep: int = KEEP_TABLES, max_bytes: int = MAX_KEPT_BYTES,
                 spares: int = MAX_SPARES, spare_bytes: int = MAX_SPARE_BYTES) -> None:
        self.folder = folder
        self.keep = keep
        self.max_bytes = max_bytes
        self.max_spares = spares
        self.max_spare_bytes = spare_bytes
        self._files: "OrderedDict[int, tuple[weakref.ref, str]]" = OrderedDict()
        self._spares: list[str] = []  # oldest first
        self._lock = threading.Lock()  # weakref callbacks may run on any thread
        self.reused = 0  # writes that went over a spare's pages (the bench reports it)

    def path_for(self, table: Any, job_dir: Path, name: str) -> str:
        """An IPC file holding `table`: the kept one if this very table was written before."""
        self._sweep()
        entry = self._files.get(id(table))
        if entry is not None and entry[0]() is table and os.path.exists(entry[1]):
            self._files.move_to_end(id(table))
            return entry[1]
        if table.nbytes > self.max_bytes:
            path = str(job_dir / name)  # removed with the job folder
            write_ipc(table, path)
            return path
        path = str(self.folder / f"table-{uuid.uuid4().hex[:12]}.arrow")
        if not self._write_over_spare(table, path):
            write_ipc(table, path)
        # The callback holds only the path and this object: the table is gone, nobody can ask for
        # this file again.
        self._files[id(table)] = (weakref.ref(table, _releaser(weakref.ref(self), path)), path)
        while len(self._files) > self.keep:
            _, (_, old) = self._files.popitem(last=False)
            self.release(old)
        return path

    def release(self, path: str) -> None:
        """A table's file is no longer needed: keep it as a spare, or unlink it past the caps."""
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            return
        spare = str(self.folder / f"spare-{uuid.uuid4().hex[:12]}.arrow")
        if size > self.max_spare_bytes or self.max_spares <= 0 or not self._lock.acquire(blocking=False):
            _unlink(path)
            return
        try:
            os.rename(path, spare)  # readers opening the old name from now on find nothing
            self._spares.append(spare)
            while len(self._spares) > self.max_spares or self._spare_total() > self.max_spare_bytes:
                _unlink(self._spares.pop(0))
        finally:
            self._lock.release()

    def _spare_total(self) -> int:
        total = 0
        for path in self._spares:
            try:
                total += os.stat(path).st_size
            except FileNotFoundError:
                pass
        return total

    def _write_over_spare(self, table: Entry, path: str) -> bool:
        """Write `table` over the biggest spare nobody maps; False when there is none."""
        with self._lock:
            candidates = sorted(self._spares, key=_size, reverse=True)
            for spare in candidates:
                try:
                    fd = os.open(spare, os.O_WRONLY)
                except FileNotFoundError:
                    self._spares.remove(spare)
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:  # a worker or actor still maps it
                    os.close(fd)
                    continue
                self._spares.remove(spare)
                try:
                    with open(fd, "wb", buffering=0, closefd=False) as sink:
                        _write(table, sink)
                        os.ftruncate(fd, sink.tell())  # a smaller table: the tail pages go back
                    os.rename(spare, path)  # under LOCK_EX: a reader of `path` waits for the whole file
                except BaseException:
                    _unlink(spare)
                    raise
                finally:
                    os.close(fd)  # releases the lock
                self.reused += 1
                return True
        return False

    def _sweep(self) -> None:
        for key, (ref, _path) in list(self._files.items()):
            if ref() is None:  # its callback released the file
                del self._files[key]

    def clear(self) -> None:
        for _, path in self._files.values():
            _unlink(path)
        self._files.clear()
        with self._lock:
            for path in self._spares:
                _unlink(path)
            self._spares.clear()


def write_ipc(table: Entry, path: str) -> None:
    """A new IPC file: the table's own buffers go to write() as they are (no combine, no staging)."""
    with open(path, "wb", buffering=0) as sink:
        _write(table, sink)


def _write(table: Entry, sink: Any) -> None:
    with pa.ipc.new_file(sink, table.schema) as writer:
        if isinstance(table, LazyTable):  # a loaded table still on disk: decoded a batch at a time
            for batch in table.batches():
                writer.write_batch(batch)
            pa.default_memory_pool().release_unused()  # the batches' memory back to the system
        else:
            writer.write_table(table)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return -1


def _releaser(files: "weakref.ref[IpcFiles]", path: str) -> Callable[[Any], None]:
    def release(_ref: Any) -> None:
        owner = files()
        if owner is None:
            _unlink(path)
        else:
            owner.release(path)
    return release


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


HANDOFF_ENV = "MLSQL_HANDOFF_DIR"  # set by the server for a sandboxed session (cluster/walls.py)
OWNER_LOCK = ".owner"
_held: list[int] = []  # this process's owner locks: kept open (so held) for its whole life


def scratch_dir(group: int | None = None) -> Path:
    """This process's folder for IPC files: on /dev/shm where writable, after removing dead ones.

    group: the group that must read it besides its owner (the Ray zone's, when it runs as another uid).

    The folder's owner holds an exclusive lock on its `.owner` file for as long as it lives; a
    pid alone cannot say whether the owner lives, because sandboxed kernels (their own pid
    namespace) and unsandboxed ones (tests, CONSOLE_SANDBOX=off) share /dev/shm.
    """
    # A sandboxed session's own hand-off folder, which the Ray zone's actors may read and other
    # sessions may not (cluster/walls.py); its /dev/shm is private and no actor would see it.
    shm = Path(os.environ.get(HANDOFF_ENV) or "/dev/shm")
    parent = shm if os.access(shm, os.W_OK) else Path(tempfile.gettempdir())
    if parent != shm and HANDOFF_ENV in os.environ:
        # Actors will not see these files; the worker finds that out and uses the object store.
        log.warning("the session's hand-off folder is not writable; IPC files go to a private folder")
    sweep_stale(parent)
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
    if parent == shm and HANDOFF_ENV in os.environ:
        os.chmod(folder, 0o750)  # the folder's group (setgid) is the actors'
    elif group is not None and parent == shm:
        # A kernel outside the sandbox (a headless run) whose Ray zone runs as another uid: its
        # actors read the folder through the hand-off group (cluster/walls.py's handoff_group).
        os.chown(folder, -1, group)
        os.chmod(folder, 0o750)
    fd = os.open(folder / OWNER_LOCK, os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    _held.append(fd)
    return folder


def sweep_stale(parent: Path) -> None:
    """Remove the folders whose owner is gone: nobody holds their owner lock any more."""
    for folder in parent.glob(PREFIX + "*"):
        if _OWNED.match(folder.name) is None:
            continue
        try:
            fd = os.open(folder / OWNER_LOCK, os.O_RDWR)
        except FileNotFoundError:
            continue  # being made right now (the lock comes just after the folder), or not ours
        except OSError:
            continue  # another user's folder
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its owner lives
        finally:
            os.close(fd)  # closing drops a lock taken just now, before the folder goes
        shutil.rmtree(folder, ignore_errors=True)
