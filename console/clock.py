"""Time as the server's timed parts see it: the scheduler, job runs, their retries and webhooks.

Each takes a `Clock` instead of reading `datetime.now`, `time.monotonic` and `time.sleep`
itself, so a test can hand the real server a `MovableClock` and move time (a cron's next minute,
a retry's delay, a job's timeout) instead of waiting for it. Sleeps end early when an event is
set (a stop, a wake-up), so nothing that waits needs to poll.
"""
from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

CLOCK_KEY = "console.clock"  # app.extensions: the app's one clock (app.config["CLOCK"] overrides it)


class Clock(Protocol):
    def now(self) -> datetime:
        """The time of day, aware, in UTC."""

    def monotonic(self) -> float:
        """Seconds that only go forward (for deadlines)."""

    def sleep(self, seconds: float, until: threading.Event | None = None) -> bool:
        """Wait `seconds`, or less when `until` is set; whether it was set."""

    def sleep_until(self, when: datetime, until: threading.Event | None = None) -> bool:
        """Wait until the time of day is `when`, or less when `until` is set; whether it was set."""


class SystemClock:
    """The machine's clock."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float, until: threading.Event | None = None) -> bool:
        if until is None:
            time.sleep(max(0.0, seconds))
            return False
        return until.wait(max(0.0, seconds))

    def sleep_until(self, when: datetime, until: threading.Event | None = None) -> bool:
        return self.sleep((when - self.now()).total_seconds(), until)


def app_clock(app: Any) -> Clock:
    """The app's one clock (set once, read by every part that waits): config CLOCK, else the system's."""
    clock: Clock = app.extensions.setdefault(CLOCK_KEY, app.config.get("CLOCK") or SystemClock())
    return clock


class MovableClock:
    """A clock that stands still until a test moves it with `advance`, which wakes its sleepers.

    A sleeper's end is a point on this clock, so a move made between a sleeper reading the time
    and starting to sleep is not lost. A sleeper also looks at its event every `poll` seconds of
    real time: the product sets it without telling the clock. `wait_sleeping(n)` waits until
    n threads sleep on it, so a test moves time once the product waits, not before.
    """

    def __init__(self, start: datetime | None = None, poll: float = 0.01) -> None:
        self._now = start or datetime.now(timezone.utc)
        self._mono = 1000.0
        self._poll = poll
        self._moved = threading.Condition()
        self._sleeping = 0

    def now(self) -> datetime:
        with self._moved:
            return self._now

    def monotonic(self) -> float:
        with self._moved:
            return self._mono

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time does not go back")
        with self._moved:
            self._now += timedelta(seconds=seconds)
            self._mono += seconds
            self._moved.notify_all()

    def advance_to(self, when: datetime) -> None:
        self.advance(max(0.0, (when - self.now()).total_seconds()))

    def sleep(self, seconds: float, until: threading.Event | None = None) -> bool:
        return self.sleep_until(self.now() + timedelta(seconds=max(0.0, seconds)), until)

    def sleep_until(self, when: datetime, until: threading.Event | None = None) -> bool:
        with self._moved:
            self._sleeping += 1
            self._moved.notify_all()
        try:
            while True:
                if until is not None and until.is_set():
                    return True
                with self._moved:
                    if self._now >= when:
                        return False
                    self._moved.wait(self._poll if until is not None else None)
        finally:
            with self._moved:
                self._sleeping -= 1
                self._moved.notify_all()

    def wait_sleeping(self, n: int, timeout: float = 60.0) -> None:
        """Until at least `n` threads sleep on this clock (AssertionError after `timeout` real seconds)."""
        with self._moved:
            if not self._moved.wait_for(lambda: self._sleeping >= n, timeout):
                raise AssertionError(f"{n} sleepers on the clock did not come in {timeout:.0f} s "
                                     f"({self._sleeping} sleep)")
