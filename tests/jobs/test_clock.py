"""The movable clock the timed tests hand the server: sleepers wake when it moves, not before."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

from console.clock import MovableClock, SystemClock

START = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def _sleeping(clock: MovableClock, target: object) -> tuple[threading.Thread, list[bool]]:
    woke: list[bool] = []
    t = threading.Thread(target=lambda: woke.append(target()))  # type: ignore[operator]
    t.start()
    clock.wait_sleeping(1)
    return t, woke


def test_a_sleeper_wakes_when_the_clock_reaches_its_time_and_not_before() -> None:
    clock = MovableClock(START)
    t, woke = _sleeping(clock, lambda: clock.sleep(10))
    clock.advance(9.5)
    clock.wait_sleeping(1)
    assert t.is_alive() and woke == []
    clock.advance(0.5)
    t.join(10)
    assert woke == [False] and clock.now() == START + timedelta(seconds=10)
    assert clock.monotonic() == 1010.0


def test_a_move_made_before_sleep_until_began_is_not_lost() -> None:
    clock = MovableClock(START)
    clock.advance(60)
    assert clock.sleep_until(START + timedelta(seconds=30)) is False  # already past: at once


def test_the_event_ends_a_sleep_without_the_clock_moving() -> None:
    clock = MovableClock(START)
    stop = threading.Event()
    t, woke = _sleeping(clock, lambda: clock.sleep(3600, until=stop))
    stop.set()
    t.join(10)
    assert woke == [True] and clock.now() == START


def test_time_does_not_go_back() -> None:
    with pytest.raises(ValueError):
        MovableClock(START).advance(-1)


def test_the_system_clock_is_aware_utc_and_its_event_ends_a_sleep() -> None:
    clock = SystemClock()
    assert clock.now().tzinfo == timezone.utc
    stop = threading.Event()
    stop.set()
    assert clock.sleep(3600, until=stop) is True
