"""The kernel's Arrow IPC copies of the tables Python cells read, reused while the table lives.

Handing a table to the worker costs one write of its bytes into /dev/shm (fresh tmpfs pages:
~0.15 s for 377 MB here); the worker and every actor on the node then memory-map that file.
A notebook re-runs cells on the same table (catalog tables are immutable Arrow objects, and
`session.lookup` returns the same object until the name is rebound), so the file is kept for
the table object that produced it and a later cell on it pays no write. Files are removed when
their table is garbage-collected (a weak-reference callback), when evicted (most recent `keep`
tables), and at shutdown. A file is only ever created or unlinked, never rewritten: a worker or
actor still mapping an old file keeps valid (if unlinked) pages. A kernel killed before its
shutdown leaves its folder behind; the folder name carries the kernel's PID, so the next
runtime started on the machine removes folders whose process is gone (/dev/shm is memory).
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

PREFIX = "mlsqlpy-"
_OWNED = re.compile(re.escape(PREFIX) + r"(\d+)-")
KEEP_TABLES = 2  # an input and a model table of the same cell both stay
MAX_KEPT_BYTES = 4 << 30  # bigger tables are written per job and removed when it ends


class IpcFiles:
    """IPC files of live tables in `folder`, keyed by table identity (a weak reference)."""

    def __init__(self, folder: Path, keep: int = KEEP_TABLES, max_bytes: int = MAX_KEPT_BYTES) -> None:
        self.folder = folder
        self.keep = keep
        self.max_bytes = max_bytes
        self._files: "OrderedDict[int, tuple[weakref.ref, str]]" = OrderedDict()

    def path_for(self, table: Any, job_dir: Path, name: str) -> str:
        """An IPC file holding `table`: the kept one if this very table was written before."""
        from console.worker.cell import write_ipc

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
        write_ipc(table, path)
        # The callback holds only the path: the table is gone, nobody can ask for this file again.
        self._files[id(table)] = (weakref.ref(table, _unlinker(path)), path)
        while len(self._files) > self.keep:
            _, (_, old) = self._files.popitem(last=False)
            _unlink(old)
        return path

    def _sweep(self) -> None:
        for key, (ref, _path) in list(self._files.items()):
            if ref() is None:  # its callback removed the file
                del self._files[key]

    def clear(self) -> None:
        for _, path in self._files.values():
            _unlink(path)
        self._files.clear()


def _unlinker(path: str) -> Callable[[Any], None]:
    return lambda _ref: _unlink(path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def scratch_dir() -> Path:
    """This process's folder for IPC files: on /dev/shm where writable, after removing dead ones."""
    shm = Path("/dev/shm")
    parent = shm if os.access(shm, os.W_OK) else Path(tempfile.gettempdir())
    sweep_stale(parent)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))


def sweep_stale(parent: Path) -> None:
    for folder in parent.glob(PREFIX + "*"):
        m = _OWNED.match(folder.name)
        if m is None or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # its kernel is alive
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            continue  # another user's live process
