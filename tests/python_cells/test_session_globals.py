"""Python cells share a session: globals persist between cells, completion sees them, kept actors live on."""
from __future__ import annotations

import pytest

from console.kernel import queries
from console.kernel.session import Session
from tests.conftest import stdout_of


@pytest.fixture
def session(ray_session: Session) -> Session:
    return ray_session


def test_a_variable_of_one_cell_is_there_in_the_next(session: Session) -> None:
    assert session.run_cell("--%python\nx = 41\nmeasurements_list = [1, 2]\n", kind="python", cell=1).ok
    out = session.run_cell("--%python\nprint(x + 1, len(measurements_list))\n", kind="python", cell=2)
    assert out.ok, out.error
    assert "42 2" in stdout_of(session)
    # Completion asks the worker, whose globals know names the cell text never mentions.
    source = "--%python\nmeasurements_l"
    # Asked once: a cold jedi cut by the worker's limit still answers with the globals by name.
    answer = queries.answer(session, "complete", {"source": source, "cursor": len(source), "kind": "python"})
    assert [i["label"] for i in answer["items"]] == ["measurements_list"]
    source = "--%python\nmeasurements_list.app"
    answer = queries.answer(session, "complete", {"source": source, "cursor": len(source), "kind": "python"})
    assert [i["label"] for i in answer["items"]] == ["append"]


def test_an_actor_kept_in_a_global_outlives_its_cell(session: Session) -> None:
    make = """--%python
import ray
from tests.conftest import stdout_of
from pyjava.api.mlsql import RayContext
RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Counter:
    def __init__(self):
        self.n = 0
    def incr(self):
        self.n += 1
        return self.n

counter = Counter.remote()
print("first", ray.get(counter.incr.remote()))
"""
    assert session.run_cell(make, kind="python", cell=1).ok
    out = session.run_cell("--%python\nimport ray\nprint('second', ray.get(counter.incr.remote()))\n",
                           kind="python", cell=2)
    assert out.ok, out.error
    assert "first 1" in stdout_of(session) and "second 2" in stdout_of(session)
    # Dropping the handle lets the next cell end the Ray job as before.
    assert session.run_cell("--%python\ndel counter\n", kind="python", cell=3).ok
    out = session.run_cell("--%python\nimport ray\nprint('connected', ray.is_initialized())\n", kind="python",
                           cell=4)
    assert out.ok and "connected False" in stdout_of(session)


def test_a_failed_cell_says_which_globals_keep_its_actors_alive(session: Session) -> None:
    failing = """--%python
import ray
from pyjava.api.mlsql import RayContext
RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote(num_cpus=0)
class Holder:
    def ping(self):
        return 1

holders = [Holder.remote()]
ray.get(holders[0].ping.remote())
raise ValueError("training went wrong")
"""
    out = session.run_cell(failing, kind="python", cell=1)
    assert not out.ok and "training went wrong" in str(out.error)
    stderr = "".join(e.text for e in session.events if e.type == "output" and e.stream == "stderr")
    assert "the Ray actors held by holders stay alive" in stderr, stderr
    assert session.run_cell("--%python\ndel holders\n", kind="python", cell=2).ok
