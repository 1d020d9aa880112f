"""How often a running cell's Ray usage is sampled (console/worker/ray_usage.py UsageReporter).

The reporter's clock and its wait between samples are handed in, so these tests move time instead
of waiting: `Waits` answers each wait at once and keeps what was asked; the CPU clock says what a
sample cost. The samples themselves are the real reporter's loop, thread and sends.
"""
from __future__ import annotations

import threading
import time

import pytest

from console.worker.ray_usage import INTERVAL, MOST, SETTLE, SETTLE_STEP, UsageReporter
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


def _last(reads: list[RayUsage | Exception]) -> tuple[list[float], list[CellRayUsage]]:
    """The report sent when the cell ends (the reporter stopped before its first round), each read
    answering the next of `reads` (the last one again once they run out)."""
    pauses: list[float] = []
    sent: list[CellRayUsage] = []
    left = list(reads)

    def read() -> RayUsage:
        answer = left.pop(0) if len(left) > 1 else left[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    reporter = UsageReporter(sent.append, "01000000", read=read, stop=Waits(0), pause=pauses.append)
    reporter._thread.join(30)
    assert not reporter._thread.is_alive()
    return pauses, sent


def test_the_last_report_waits_for_the_tasks_the_cell_has_finished_to_show_so() -> None:
    # The GCS learns of finished tasks from each worker about once a second: the first read at the
    # cell's end may still count them as running (a fresh-clone run's last report: 0 finished).
    running = RayUsage(tasks_running=5, tasks_finished=0)
    half = RayUsage(tasks_running=2, tasks_pending=1, tasks_finished=2)
    done = RayUsage(tasks_running=0, tasks_pending=0, tasks_finished=5)
    pauses, sent = _last([running, half, done])
    assert pauses == [SETTLE_STEP, SETTLE_STEP], pauses
    assert [s.usage for s in sent] == [done], sent  # one report: the settled one


def test_the_last_report_of_a_cell_whose_tasks_are_settled_or_unread_goes_at_once() -> None:
    assert _last([RayUsage(tasks_running=0, tasks_finished=3)]) == ([], [CellRayUsage("01000000", RayUsage(
        tasks_running=0, tasks_finished=3))])
    assert _last([RayUsage(actors_alive=2)]) == ([], [CellRayUsage("01000000", RayUsage(actors_alive=2))])


def test_tasks_left_running_on_purpose_hold_the_cell_end_at_most_settle() -> None:
    still = RayUsage(tasks_running=1, tasks_finished=4)
    pauses, sent = _last([still])
    assert sum(pauses) == pytest.approx(SETTLE) and all(p == SETTLE_STEP for p in pauses), pauses
    assert [s.usage for s in sent] == [still], sent


def test_a_read_that_fails_while_settling_keeps_the_last_good_one() -> None:
    running = RayUsage(tasks_running=1)
    pauses, sent = _last([running, RuntimeError("the GCS went away"), RayUsage(tasks_finished=1)])
    assert pauses == [SETTLE_STEP, SETTLE_STEP], pauses
    assert [s.usage for s in sent] == [RayUsage(tasks_finished=1)], sent
