"""The batcher's pacing on a clock the test moves: what is stored between two flushes is one batch.

A real store (SQLite) and the real batcher thread; only time is the test's. Moving it, not
racing the wall clock, is what makes "500 redraws become a handful of stored chunks" hold on a
machine of any speed (the live-server test of the same promise counted redraws and failed on a
loaded machine, where a slower kernel spread them over more flushes).
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.clock import MovableClock
from console.outputs.batcher import NotebookLocks, OutputBatcher
from console.store import Store
from console.wire.browser import OutputEvent


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path / 'console.db'}")
    yield s
    s.close()


class Published:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.cond = threading.Condition()

    def __call__(self, notebook_id: str, events: list[Any]) -> None:
        with self.cond:
            self.events.extend(events)
            self.cond.notify_all()

    def wait_count(self, n: int) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.events) >= n, 30), self.events


def bar(i: int, steps: int = 500) -> str:
    return f"\r{i}/{steps} [{'=' * i}>{'.' * (steps - i)}]"


def test_redraws_between_two_flushes_are_stored_as_one_chunk(store: Store, tmp_path: Path) -> None:
    nb = store.create_notebook("n", cells=[{"kind": "python", "source": "x"}])
    cell = nb.cells[0].id
    run = store.create_run(nb.id, cell, "x")
    clock = MovableClock()
    published = Published()
    b = OutputBatcher(store, published, NotebookLocks(), 0.05, clock=clock)
    b.start()
    try:
        b.open_run(run.id, nb.id, cell)
        b.add(OutputEvent(bar(1), notebook_id=nb.id, cell_id=cell, run_id=run.id))
        published.wait_count(1)  # a line after a quiet spell goes out at once
        for i in range(2, 501):
            b.add(OutputEvent(bar(i), notebook_id=nb.id, cell_id=cell, run_id=run.id))
        clock.wait_sleeping(1)  # the loop waits out its interval, on our clock
        assert len(published.events) == 1  # nothing more while time stands still
        clock.advance(0.05)
        published.wait_count(2)
        b.add(OutputEvent("\n", notebook_id=nb.id, cell_id=cell, run_id=run.id))
        b.close_run(run.id)  # the run's end flushes at once, whatever the clock says
    finally:
        b.stop()
    stored = [c.text for c in store.outputs_since(run.id)]
    assert len(stored) == 3
    assert stored[1] == bar(500)  # 499 redraws, one chunk: the line as it last looked
    assert "".join(stored).count("/500 [") == 2
    assert stored[2] == "\n"
