"""A running Python cell reports its Ray job's actors, tasks and CPUs (console/worker/ray_usage.py).

A real kernel Session runs real cells on the test session's Ray head (tests/conftest.py); what the
worker reports reaches the session's emit as CellRayUsage, only while the cell runs. The Ray
dashboard is off on that head, as on every head of ours: this is the GCS's word, not the state API's.
"""
from __future__ import annotations

from typing import Any

import pytest

from console.kernel.session import Session
from console.wire.worker import CellRayUsage

TWO_ACTORS = """--%python
import time
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote(num_cpus=0.5)
class Holder:
    def hold(self, seconds):
        time.sleep(seconds)
        return seconds

@ray.remote(num_cpus=0)
def tick(i):
    time.sleep(2)
    return i

holders = [Holder.remote(), Holder.remote()]
calls = [h.hold.remote(4) for h in holders] + [tick.remote(i) for i in range(3)]
print(ray.get(calls))
"""


@pytest.fixture
def session(ray_session: Session) -> Session:
    return ray_session


def _reports(session: Any) -> list[CellRayUsage]:
    return [e for e in session.events if isinstance(e, CellRayUsage)]


@pytest.mark.slow
def test_a_ray_cell_reports_its_two_actors_tasks_and_cpus_while_it_runs(session: Session) -> None:
    out = session.run_cell(TWO_ACTORS, kind="python", cell=1)
    assert out.ok, out.error
    reports = _reports(session)
    assert len(reports) >= 2, reports  # every 1.5 s for ~4 s, and once at the end
    busiest = max(reports, key=lambda r: r.usage.actors_alive)
    usage = busiest.usage
    assert usage.actors_alive == 2, usage
    assert [a.class_name for a in usage.actors] == ["Holder", "Holder"], usage.actors
    assert all(a.state == "alive" and a.cpus == 0.5 and a.node for a in usage.actors), usage.actors
    assert usage.cpus_in_use >= 1.0, usage  # the two actors' half CPUs
    assert usage.cluster_cpus == 2.0, usage
    # Task events come from the GCS, with the dashboard off.
    assert usage.tasks_running is not None, usage.note
    seen = {(t.name, t.state) for r in reports for t in r.usage.tasks}
    assert any(name.endswith("hold") for name, _ in seen), seen
    assert any(name == "tick" for name, _ in seen), seen
    assert reports[-1].usage.tasks_finished is not None and reports[-1].usage.tasks_finished >= 1, reports[-1]


def test_a_cell_without_ray_reports_nothing(session: Session) -> None:
    out = session.run_cell("--%python\nimport time\ntime.sleep(2)\nprint('no ray')\n", kind="python", cell=2)
    assert out.ok, out.error
    assert _reports(session) == []
