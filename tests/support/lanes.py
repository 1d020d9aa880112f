"""How `make test` shares the suite among pytest-xdist's workers (`-n N --dist loadscope`).

xdist's own `--dist loadgroup` cannot be used: it marks a test's group by rewriting
`item._nodeid`, which pytest 9 no longer reads (a node's id is `_id` now), so every group was
spread over every worker. This scheduler decides the same thing from the test's path alone,
which the controller sees without importing anything:

- the tests that train the demo or the seed for real (TensorFlow actors on Ray, ~5 GB each at
  full size) share one worker, so two of them never fill the machine's memory together (Ray's
  memory monitor then kills the other's actors: seen in the first parallel run);
- the browser and the sandbox folders go to two workers each: each worker that runs one of
  their tests starts the folder's session fixtures (Chromium and its server, the walled server),
  which cost more than a spread over more workers gains on two cores;
- every other file is a unit of its own (its module fixtures stay on one worker);
- the longest units start first, so the run does not end waiting on one that started last.
"""
from __future__ import annotations

import zlib

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
_ORDER = {"heavy": 0, "tests/sandbox/": 1, "tests/browser/": 1}


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to (what one worker runs from start to end)."""
    path = nodeid.split("::", 1)[0]
    if path in HEAVY:
        return "heavy"
    for folder in _SHARED_FIXTURE_FOLDERS:
        if path.startswith(folder):
            return f"{folder}{zlib.crc32(path.encode()) % 2}"
    return path


def _rank(unit: str) -> int:
    return min((rank for prefix, rank in _ORDER.items() if unit.startswith(prefix)), default=2)


class LaneScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)

    def _assign_work_unit(self, node: WorkerController) -> None:
        # As LoadScopeScheduling's, but the next unit is the first of the lowest rank, not the
        # first collected: the heavy unit and the folders with shared fixtures start first.
        assert self.workqueue
        scope = min(self.workqueue, key=_rank)
        work_unit = self.workqueue.pop(scope)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        collection = self.registered_collections[node]
        node.send_runtest_some([collection.index(nodeid) for nodeid, done in work_unit.items() if not done])
