"""How often a running cell's Ray usage is sampled (console/worker/ray_usage.py UsageReporter).

The reporter's clock and its wait between samples are handed in, so these tests move time instead
of waiting: `Waits` answers each wait at once and keeps what was asked; the CPU clock says what a
sample cost. The samples themselves are the real reporter's loop, thread and sends.
"""
from __future__ import annotations

import threading
import time

import pytest

from console.worker.ray_usage import INTERVAL, MOST, UsageReporter
from console.wire.worker import CellRayUsage, RayUsage


class Waits:
    """The reporter's stop event: each wait() returns at once (time moved) and is noted; after
    `rounds` waits it says "stopped"."""

    def __init__(self, rounds: int) -> None:
        self.asked: list[float] = []
        self.rounds = rounds
        self.stopped = threading.Event()

    def wait(self, seconds: float) -> bool:
        self.asked.append(seconds)
        return len(self.asked) > self.rounds or self.stopped.is_set()

    def set(self) -> None:
        self.stopped.set()


def _run(read_cost_cpu: float, answer_wall: float, rounds: int = 3) -> tuple[list[float], list[CellRayUsage]]:
    cpu = [0.0]
    sent: list[CellRayUsage] = []

    def read() -> RayUsage:
        time.sleep(answer_wall)  # the GCS's answers: waited for, no CPU of the driver's
        cpu[0] += read_cost_cpu
        return RayUsage(actors_alive=2)

    waits = Waits(rounds)
    reporter = UsageReporter(sent.append, "01000000", read=read, cpu_clock=lambda: cpu[0], stop=waits)
    reporter._thread.join(30)
    assert not reporter._thread.is_alive()
    return waits.asked, sent


def test_a_sample_that_waits_on_a_busy_gcs_does_not_put_the_next_one_off() -> None:
    # 0.2 s waiting for answers, no CPU: the old pace (20 times the wall time) waited 4 s instead
    # of 1.5, and on a loaded machine (answers of 2 s) 40 s: past a whole cell's end.
    asked, sent = _run(read_cost_cpu=0.0, answer_wall=0.2)
    assert asked == [INTERVAL] * 4, asked
    assert len(sent) == 4 and all(s.usage.actors_alive == 2 for s in sent), sent  # 3 rounds + the last


def test_a_costly_sample_stretches_the_pace_but_never_past_most() -> None:
    asked, _ = _run(read_cost_cpu=0.2, answer_wall=0.0)  # 20 x 0.2 s of CPU: 4 s
    assert asked == pytest.approx([INTERVAL, 4.0, 4.0, 4.0]), asked
    asked, _ = _run(read_cost_cpu=5.0, answer_wall=0.0)  # 100 s by the share alone
    assert asked == [INTERVAL, MOST, MOST, MOST], asked
