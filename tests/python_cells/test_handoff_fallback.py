"""Where Ray's workers cannot read the kernel's hand-off file, partitions go through the object store (issue 30).

The demo failed in `make run` because the kernel's IPC file was out of the actors' sight while the
node-id check still pointed them at it. Here a real Ray worker is asked, as the cell's worker asks
it, about a file it cannot open: the cell still gets every row, says so once, and an error about
a handle that truly has nothing left names nodes, not paths.
"""
from __future__ import annotations

import pytest

from console.kernel.session import Session
from tests.conftest import stdout_of

CELL = """--%python
import ray, pyarrow as pa
from pyjava.api.mlsql import RayContext
from console.actors import data
RayContext.connect(globals(), "127.0.0.1:10001")
table = pa.table({"x": list(range(100))})
parts = data.split(table, 2)
servers = data.partition_handles(parts, 41000, "UTC", "/nonexistent-handoff/table.arrow")
print("refs", all(s.ref is not None for s in servers))

@ray.remote
def total(server):
    from pyjava.api.mlsql import RayContext
    return sum(row["x"] for row in RayContext.collect_from([server]))

print("sum", sum(ray.get([total.remote(s) for s in servers])))
again = data.partition_handles(parts, 41100, "UTC", "/nonexistent-handoff/other.arrow")  # asked once per folder
print("refs again", all(s.ref is not None for s in again))

@ray.remote
def lost():
    here = ray.get_runtime_context().get_node_id()
    gone = data.DataServer("127.0.0.1", 41200, "UTC", num_rows=5, path="/nonexistent-handoff/gone.arrow",
                           node_id=here)
    try:
        gone.arrow()
    except LookupError as exc:
        return str(exc)
    return "no error"

print("lost:", ray.get(lost.remote()))
"""


@pytest.fixture
def session(ray_session: Session) -> Session:
    return ray_session


def test_unreadable_hand_off_falls_back_to_the_object_store_and_says_so_once(session: Session) -> None:
    out = session.run_cell(CELL, kind="python", cell=1)
    assert out.ok, out.error
    shown = stdout_of(session)
    assert "refs True" in shown and "sum 4950" in shown and "refs again True" in shown, shown
    stderr = "".join(e.text for e in session.events if e.type == "output" and e.stream == "stderr")
    notice = "this node's Ray workers cannot read the session's hand-off folder"
    assert stderr.count(notice) == 1, stderr
    assert "object store" in stderr and "/nonexistent-handoff" not in stderr
    lost = shown.split("lost:", 1)[1]
    assert "data server 127.0.0.1:41200" in lost and "written on Ray node" in lost, lost
    assert "data_servers()" in lost and "/nonexistent-handoff" not in lost, lost
