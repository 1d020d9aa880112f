"""Python cells share a session: globals persist between cells, completion sees them, kept actors live on."""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from console.config import load_config
from console.kernel import queries
from console.kernel.session import Session
from console.messages import OutputEvent


@pytest.fixture
def session(ray_cfg: Any) -> Iterator[Session]:
    events: list[Any] = []
    s = Session(load_config(dict(ray_cfg)), events.append, session_id="globals-py")
    s.events = events  # type: ignore[attr-defined]
    yield s
    s.shutdown()


def _stdout(session: Session) -> str:
    return "".join(e.text for e in session.events if isinstance(e, OutputEvent)  # type: ignore[attr-defined]
                   and e.stream == "stdout")


def test_a_variable_of_one_cell_is_there_in_the_next(session: Session) -> None:
    assert session.run_cell("--%python\nx = 41\nmeasurements_list = [1, 2]\n", kind="python", cell=1).ok
    out = session.run_cell("--%python\nprint(x + 1, len(measurements_list))\n", kind="python", cell=2)
    assert out.ok, out.error
    assert "42 2" in _stdout(session)
    # Completion asks the worker, whose globals know names the cell text never mentions.
    source = "--%python\nmeasurements_l"
    answer = queries.answer(session, "complete", {"source": source, "cursor": len(source), "kind": "python"})
    assert [i["label"] for i in answer["items"]] == ["measurements_list"]
    source = "--%python\nmeasurements_list.app"
    answer = queries.answer(session, "complete", {"source": source, "cursor": len(source), "kind": "python"})
    assert [i["label"] for i in answer["items"]] == ["append"]


def test_an_actor_kept_in_a_global_outlives_its_cell(session: Session) -> None:
    make = """--%python
import ray
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
    assert "first 1" in _stdout(session) and "second 2" in _stdout(session)
    # Dropping the handle lets the next cell end the Ray job as before.
    assert session.run_cell("--%python\ndel counter\n", kind="python", cell=3).ok
    out = session.run_cell("--%python\nimport ray\nprint('connected', ray.is_initialized())\n", kind="python",
                           cell=4)
    assert out.ok and "connected False" in _stdout(session)
