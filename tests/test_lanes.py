"""The parallel suite's scheduler (tests/support/lanes.py): memory decides what runs together, and
a worker told to wait is given work again once another's unit ends, or at once when no other
worker would report (a wait that nothing ends would hang `make test`)."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from tests.support import lanes


class Worker:
    """What the scheduler sees of an xdist worker: the tests it was sent, and whether it was shut down."""

    def __init__(self, name: str) -> None:
        self.name, self.sent, self.shutting_down = name, [], False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def scheduler(units: dict[str, int], workers: list[Worker]) -> Any:
    """A LaneScheduling over one test per unit (each file its own unit), its collection given."""
    sched = lanes.LaneScheduling.__new__(lanes.LaneScheduling)
    sched.numnodes = len(workers)
    sched.workqueue = OrderedDict()
    sched.assigned_work = {w: {} for w in workers}
    sched.waiting = set()
    sched.log = lambda *args: None
    collection = [f"tests/x/{name}.py::t" for name in units]
    sched.collection = collection
    sched.registered_collections = {w: collection for w in workers}
    for nodeid in collection:
        sched.workqueue[sched._split_scope(nodeid)] = {nodeid: False}
    return sched


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    memory = {"tests/x/big.py": 9000, "tests/x/big2.py": 9000, "tests/x/small.py": 100}
    monkeypatch.setattr(lanes, "MEMORY", memory)
    monkeypatch.setattr(lanes, "COSTS", {"tests/x/big.py": 300.0, "tests/x/big2.py": 200.0, "tests/x/small.py": 5.0})
    monkeypatch.setattr(lanes, "BUDGET_MB", 12_000)
    return memory


def two_tests(sched: Any, unit: str) -> None:
    """Give `unit` a second test (a worker running it will report once before its last)."""
    sched.workqueue[f"tests/x/{unit}.py"][f"tests/x/{unit}.py::u"] = False
    for w in sched.registered_collections:
        sched.registered_collections[w] = sched.registered_collections[w] + [f"tests/x/{unit}.py::u"]


def done(sched: Any, worker: Worker, nodeid: str) -> None:
    sched.mark_test_complete(worker, sched.registered_collections[worker].index(nodeid))


def test_units_that_do_not_fit_together_run_one_after_the_other(measured: dict[str, int]) -> None:
    a, b = Worker("a"), Worker("b")
    sched = scheduler({"big": 0, "big2": 0, "small": 0}, [a, b])
    sched._assign_work_unit(a)
    assert list(sched.assigned_work[a]) == ["tests/x/big.py"]  # the longest first
    sched._assign_work_unit(b)
    assert list(sched.assigned_work[b]) == ["tests/x/small.py"]  # big2 does not fit beside big
    done(sched, b, "tests/x/small.py::t")
    # b asks again; nobody will report (a holds big's one test until it knows its next): a, which
    # holds the memory, takes big2 to run after big, and b waits rather than run big2 beside big.
    assert list(sched.assigned_work[a]) == ["tests/x/big.py", "tests/x/big2.py"]
    assert b in sched.waiting and "tests/x/big2.py" not in sched.assigned_work[b]


def test_a_worker_waits_while_another_will_report_and_is_let_go_when_nothing_is_left(
        measured: dict[str, int]) -> None:
    a, b = Worker("a"), Worker("b")
    sched = scheduler({"big": 0, "big2": 0}, [a, b])
    two_tests(sched, "big")
    sched._assign_work_unit(a)
    sched._assign_work_unit(b)
    assert b in sched.waiting and not b.sent
    done(sched, a, "tests/x/big.py::t")  # a asks (one test left): big2 runs after big on a
    assert list(sched.assigned_work[a]) == ["tests/x/big.py", "tests/x/big2.py"]
    assert b.shutting_down and not b.sent and not sched.waiting  # nothing left for b


def test_a_waiting_worker_is_given_a_unit_once_memory_is_freed(measured: dict[str, int],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(lanes.MEMORY, "tests/x/mid.py", 3500)
    monkeypatch.setitem(lanes.MEMORY, "tests/x/big2.py", 6000)
    monkeypatch.setitem(lanes.COSTS, "tests/x/mid.py", 100.0)
    a, b, c = Worker("a"), Worker("b"), Worker("c")
    sched = scheduler({"big": 0, "mid": 0, "big2": 0}, [a, b, c])
    two_tests(sched, "big")
    for n in range(2):  # big2: three tests, so its worker does not ask again at once
        sched.workqueue["tests/x/big2.py"][f"tests/x/big2.py::v{n}"] = False
        for w in sched.registered_collections:
            sched.registered_collections[w] = sched.registered_collections[w] + [f"tests/x/big2.py::v{n}"]
    sched._assign_work_unit(a)  # big (9000)
    sched._assign_work_unit(c)  # neither fits beside big within 12 000: c waits, and so does b
    sched._assign_work_unit(b)
    assert {b, c} <= sched.waiting
    done(sched, a, "tests/x/big.py::t")  # a asks: big2 (the longer) runs after big on a
    assert "tests/x/big2.py" in sched.assigned_work[a] and {b, c} <= sched.waiting
    done(sched, a, "tests/x/big.py::u")  # big ended: mid fits beside big2, a waiting worker takes it
    takers = [w for w in (b, c) if "tests/x/mid.py" in sched.assigned_work[w]]
    assert len(takers) == 1 and takers[0].sent
    assert all(w.shutting_down for w in (b, c) if w not in takers) and not sched.waiting


def test_units_are_the_files_or_the_groups() -> None:
    assert lanes.unit_of("tests/python_cells/test_seed.py::test_x") == "heavy"
    assert lanes.unit_of("tests/browser/test_browser_find.py::t") in ("tests/browser/0", "tests/browser/1")
    assert lanes.unit_of("tests/kernel/test_sql.py::t") == "tests/kernel/test_sql.py"
    assert lanes.memory_of("heavy") >= 5000  # the measured table: full-size trainings need gigabytes
    assert lanes.memory_of("tests/never/measured.py") == lanes.DEFAULT_MB


def test_every_test_file_that_connects_a_ray_client_marks_it() -> None:
    """A ray:// driver in a test not marked `ray_client` could take another cluster's Ray Client
    port at the same moment (tests/conftest.py, _one_ray_client_test_at_a_time)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent
    # Files that only name a ray:// address (a parser's, a compose file's) and connect nothing.
    names_only = {"test_docker.py", "test_lanes.py"}
    texts = {str(path.relative_to(root)): path.read_text(encoding="utf-8") for path in sorted(root.rglob("test_*.py"))}
    unmarked = [name for name, text in texts.items()
                if "ray://" in text and name not in names_only and "pytest.mark.ray_client" not in text]
    assert not unmarked, unmarked
