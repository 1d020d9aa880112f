"""A run's end as an event: whoever waits for a queued run (a job's runner) is woken when the
server stores how it ended, instead of reading the store every fraction of a second (issue 33).

The session manager calls ended(run_id) right after finish_run() committed, and wake_all() when it
shuts down; a waiter registers before it reads the store, so an end that comes in between is seen
either in the store or by the event.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class RunEnds:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, list[threading.Event]] = {}
        self._closed = False

    @contextmanager
    def watch(self, run_id: str) -> Iterator[threading.Event]:
        """An event set when the run ends (or the server stops) while the block runs."""
        event = threading.Event()
        with self._lock:
            if self._closed:
                event.set()
            self._waiting.setdefault(run_id, []).append(event)
        try:
            yield event
        finally:
            with self._lock:
                waiting = self._waiting.get(run_id, [])
                if event in waiting:
                    waiting.remove(event)
                if not waiting:
                    self._waiting.pop(run_id, None)

    def ended(self, run_id: str) -> None:
        with self._lock:
            for event in self._waiting.get(run_id, []):
                event.set()

    def wake_all(self) -> None:
        """The server stops: nobody waits any longer."""
        with self._lock:
            self._closed = True
            for events in self._waiting.values():
                for event in events:
                    event.set()


__all__ = ["RunEnds"]
