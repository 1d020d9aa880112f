"""Failed logins per client address, and what a password check costs when there is nothing to check.

`AddressThrottle`: after LIMIT failed logins (or wrong old passwords) from one address within
WINDOW seconds, that address's further attempts get 429 for BLOCK seconds. Attempts still being
checked count too, so 60 parallel guesses cannot all slip in before the first failure is recorded.
It lives in the server process's memory: the server is one process (console/server/server.py),
and a restart forgetting it costs an attacker nothing the per-name lock in the store does not.

`pause_like_a_hash()`: an unknown user name has no hash to check. Hashing a dummy password (what
we did) made each such guess cost as much CPU as a real one, so a burst of guesses with made-up
names starved every other request; sleeping for as long as a real check takes answers in about
the same time without using the CPU.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

LIMIT = 20
WINDOW = 60.0
BLOCK = 30.0
MAX_ADDRESSES = 10_000  # past this many remembered addresses, the idle ones are forgotten


class AddressThrottle:
    def __init__(self, limit: int = LIMIT, window: float = WINDOW, block: float = BLOCK,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self.block, self.clock = limit, window, block, clock
        self._lock = threading.Lock()
        self._failures: dict[str, deque[float]] = {}
        self._pending: dict[str, int] = {}
        self._blocked: dict[str, float] = {}

    def begin(self, address: str) -> int:
        """0 when this attempt may go on (call end() after it), else the seconds to wait (a 429)."""
        with self._lock:
            now = self.clock()
            until = self._blocked.get(address, 0.0)
            if until > now:
                return int(until - now) + 1
            self._blocked.pop(address, None)
            recent = self._recent(address, now)
            if len(recent) + self._pending.get(address, 0) >= self.limit:
                return int(self.block)
            self._pending[address] = self._pending.get(address, 0) + 1
            return 0

    def end(self, address: str, failed: bool) -> None:
        """The attempt begun for `address` is over; a failure counts towards the block."""
        with self._lock:
            now = self.clock()
            left = self._pending.get(address, 1) - 1
            if left > 0:
                self._pending[address] = left
            else:
                self._pending.pop(address, None)
            if not failed:
                return
            recent = self._recent(address, now)
            recent.append(now)
            if len(recent) >= self.limit:
                # Blocked from now on; the count starts afresh when the block ends.
                self._blocked[address] = now + self.block
                del self._failures[address]
            if len(self._failures) + len(self._blocked) > MAX_ADDRESSES:
                self._forget_idle(now)

    def _recent(self, address: str, now: float) -> deque[float]:
        recent = self._failures.setdefault(address, deque())
        while recent and recent[0] <= now - self.window:
            recent.popleft()
        return recent

    def _forget_idle(self, now: float) -> None:
        for address in [a for a, until in self._blocked.items() if until <= now]:
            del self._blocked[address]
        for address in list(self._failures):
            if not self._recent(address, now) and address not in self._pending:
                del self._failures[address]


class HashTimer:
    """How long a real password check takes here, learnt from the checks made (a moving average)."""

    def __init__(self, measure: Callable[[], object], sleep: Callable[[float], object] = time.sleep) -> None:
        self._measure = measure
        self._sleep = sleep  # what pause() waits with (a test records what it is asked to wait)
        self._seconds: float | None = None
        self._lock = threading.Lock()
        self._measuring = threading.Lock()  # one measurement, however many guesses arrive at once

    def observe(self, seconds: float) -> None:
        with self._lock:
            self._seconds = seconds if self._seconds is None else 0.8 * self._seconds + 0.2 * seconds

    def typical(self) -> float:
        with self._measuring:
            if self._seconds is None:
                # An unknown name before any real check: time one real hash, once.
                start = time.perf_counter()
                self._measure()
                self.observe(time.perf_counter() - start)
        assert self._seconds is not None
        return self._seconds

    def pause(self) -> None:
        """Take about as long as a real check, sleeping (no CPU; other requests go on)."""
        self._sleep(self.typical())
