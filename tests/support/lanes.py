"""How `make test` shares the suite among pytest-xdist's workers (`-n N --dist loadscope`).

xdist's own `--dist loadgroup` cannot be used: it marks a test's group by rewriting
`item._nodeid`, which pytest 9 no longer reads (a node's id is `_id` now), so every group was
spread over every worker. This scheduler decides from the test's path alone, which the
controller sees without importing anything.

Units of work (what one worker runs from start to end):
- the tests that train the demo or the seed for real (TensorFlow actors on Ray) are one unit;
- the browser and the sandbox folders are two units each: each worker that runs one of their
  tests starts the folder's session fixtures (Chromium and its server, the walled server),
  which cost more than a spread over more workers gains on two cores;
- every other file is a unit of its own (its module fixtures stay on one worker).

Memory decides what runs together. On a 2-core, 24 GB machine the suite is bound by CPU and by
memory at once: four workers that each start Ray heads and TensorFlow actors filled the memory,
and Ray's out-of-memory monitor killed actors (two failures in the first 4-worker run). Each
unit has the memory it needs (MEMORY, measured: tests/support/cpu_log.py); a worker that asks
for work gets the longest unit that fits, within BUDGET_MB, beside the units not yet ended on
the other workers (its own end before the next it is given starts). A worker gets nothing for
now when none fits and another worker still has tests to run (its next result asks again).
When no worker will report (each holds at most the one test xdist keeps back until it knows the
next), the worker holding the most memory takes the unit, to run after that test, so the run
never waits on itself and the two units never run at once.

COSTS orders the units (longest first, so the run does not end waiting on one that started
last): each unit's seconds in a serial run (cpu_log's wall column, summed per unit).
"""
from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling
from xdist.workermanage import WorkerController

# Files whose tests train on Ray with TensorFlow at the demo's or the seed's size.
HEAVY = frozenset({
    "tests/access/test_access_no_server_paths.py",
    "tests/browser/test_browser_demo_clean.py",
    "tests/browser/test_browser_main_path.py",
    "tests/python_cells/test_external_cluster.py",
    "tests/python_cells/test_ray_udf.py",
    "tests/python_cells/test_seed.py",
    "tests/python_cells/test_seed_notebook.py",
    "tests/sandbox/test_walls_demo.py",
    "tests/sandbox/test_walls_seed.py",
})
_SHARED_FIXTURE_FOLDERS = ("tests/browser/", "tests/sandbox/")
_MEASURED = json.loads((Path(__file__).with_name("suite_costs.json")).read_text(encoding="utf-8"))
# Unit -> seconds in a serial run; unit -> MB of memory its worker uses at its peak, above an idle worker.
COSTS: dict[str, float] = _MEASURED["seconds"]
MEMORY: dict[str, int] = _MEASURED["memory_mb"]
DEFAULT_MB = 600  # a unit measured with nothing of its own: a server and a kernel or two
BUDGET_MB = 12_000  # all units running at once; the rest of the 23.5 GB is the workers and the system


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to."""
    path = nodeid.split("::", 1)[0]
    if path in HEAVY:
        return "heavy"
    for folder in _SHARED_FIXTURE_FOLDERS:
        if path.startswith(folder):
            return f"{folder}{zlib.crc32(path.encode()) % 2}"
    return path


def memory_of(unit: str) -> int:
    # A measured figure is the most the machine's use rose above the tests just before: one under
    # what a server with a kernel holds is the measure's noise, not a unit that needs nothing.
    return max(MEMORY.get(unit, 0), DEFAULT_MB)


class LaneScheduling(LoadScopeScheduling):
    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self.waiting: set[WorkerController] = set()  # asked for work that did not fit yet

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)

    def _own_mb(self, node: WorkerController) -> int:
        """Memory of the worker's units not yet ended."""
        return sum(memory_of(scope) for scope, tests in self.assigned_work.get(node, {}).items()
                   if not all(tests.values()))

    def _running_mb(self, node: WorkerController) -> int:
        """Memory of the units not yet ended on the other workers (a worker's own run one after another,
        so they have ended when the next one it is given starts)."""
        return sum(self._own_mb(other) for other in self.assigned_work if other is not node)

    def _will_report(self) -> bool:
        """Some worker will still send a result: one with two tests or more to run (a worker holds
        its last test back until it knows the next, so one left may never run by itself)."""
        return any(self._pending_of(work) >= 2 for other, work in self.assigned_work.items()
                   if not other.shutting_down)

    def _fitting(self, node: WorkerController) -> list[str]:
        room = BUDGET_MB - self._running_mb(node)
        return [scope for scope in self.workqueue if memory_of(scope) <= room]

    def _assign_work_unit(self, node: WorkerController) -> None:
        assert self.workqueue
        fitting = self._fitting(node)
        if not fitting:
            if self._will_report():
                self.waiting.add(node)
                return
            # Nobody will report: the worker holding the most memory takes the unit, to run after
            # its held test (one after another, so the two never overlap); this one waits for its result.
            holder = max((w for w in self.assigned_work if not w.shutting_down), key=self._own_mb)
            if holder is not node:
                self.waiting.add(node)
            fitting = self._fitting(holder) or list(self.workqueue)
            node = holder
        scope = max(fitting, key=lambda s: COSTS.get(s, 0.0))
        self.waiting.discard(node)
        work_unit = self.workqueue.pop(scope)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        collection = self.registered_collections[node]
        node.send_runtest_some([collection.index(nodeid) for nodeid, done in work_unit.items() if not done])

    def mark_test_complete(self, node: WorkerController, item_index: int, duration: float = 0) -> None:
        super().mark_test_complete(node, item_index, duration)
        # A unit may have ended and freed its memory: the workers waiting for one ask again (after the
        # one that reported, which may have taken the unit to run after its own).
        for waiting in list(self.waiting):
            if waiting is not node and waiting in self.assigned_work:
                self._reschedule(waiting)  # gives it a unit, or shuts it down when none is left
            if waiting.shutting_down:
                self.waiting.discard(waiting)
