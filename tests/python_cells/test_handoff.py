"""The kernel's IPC files: spares rewritten in place only when nobody maps them."""
from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pyarrow as pa

from console.actors.data import map_locked
from console.kernel.ipcfiles import IpcFiles


def _table(i: int, n: int = 1000) -> pa.Table:
    return pa.table({"x": np.arange(n) + i * 10_000, "y": [f"v{i}"] * n})


def test_a_dead_tables_file_is_reused_for_the_next_table(tmp_path: Path) -> None:
    files = IpcFiles(tmp_path)
    a = _table(1)
    path_a = files.path_for(a, tmp_path, "input.arrow")
    del a
    gc.collect()
    assert not Path(path_a).exists() and len(list(tmp_path.glob("spare-*"))) == 1
    b = _table(2, 600)  # smaller: the spare is cut to its length
    path_b = files.path_for(b, tmp_path, "input.arrow")
    assert files.reused == 1 and not list(tmp_path.glob("spare-*"))
    mapped = map_locked(path_b)
    assert mapped is not None and mapped.equals(b)
    files.clear()
    assert not list(tmp_path.iterdir())


def test_a_mapped_spare_is_never_rewritten(tmp_path: Path) -> None:
    files = IpcFiles(tmp_path)
    a = _table(1)
    path_a = files.path_for(a, tmp_path, "input.arrow")
    held = map_locked(path_a)  # an actor still reading it
    assert held is not None
    del a
    gc.collect()
    b = _table(2)
    files.path_for(b, tmp_path, "input.arrow")
    assert files.reused == 0  # written to fresh pages instead
    assert held.equals(_table(1))  # the reader's data did not change under it
    assert map_locked(path_a) is None  # the old name is gone: a late reader finds nothing
    del held
    gc.collect()
    c = _table(3)
    files.path_for(c, tmp_path, "input.arrow")  # the lock went with the mapping: now it is reused
    assert files.reused == 1
    files.clear()


def test_spares_are_capped(tmp_path: Path) -> None:
    files = IpcFiles(tmp_path, keep=1, spares=1)
    tables = [_table(i) for i in range(4)]
    for t in tables:
        files.path_for(t, tmp_path, "input.arrow")  # each evicts the previous one
    assert len(list(tmp_path.glob("spare-*"))) == 1
    big = IpcFiles(tmp_path / "big", spare_bytes=10)
    (tmp_path / "big").mkdir()
    t = _table(9)
    big.path_for(t, tmp_path, "input.arrow")
    del t
    gc.collect()
    assert not list((tmp_path / "big").iterdir())  # over the byte cap: unlinked, memory back
    files.clear()
