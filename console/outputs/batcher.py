"""Batch a run's output every ~50 ms: merge, collapse redraws, number, store, THEN broadcast.

Storing before broadcasting is what makes replay exact: anything a viewer saw live is in the
store under its seq, and the per-notebook lock (held around store+broadcast here, and around
replay+room-join in the socket layer) means a joining viewer gets every chunk exactly once.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from console.ids import CellId, NotebookId, RunId
from console.messages import Message, MetricsEvent, OutputEvent
from console.outputs.collapse import StreamCollapser

log = logging.getLogger(__name__)

# A stored chunk stays under this size, so head/tail truncation of big logs is fine-grained
# (a burst of 1 MB/s is still only ~250 events a second).
CHUNK_MAX_CHARS = 4096


class RunSink(Protocol):
    """The store functions the batcher needs (console.store.Store has them)."""

    def append_output(self, run_id: RunId, chunks: Iterable[Any], hidden_bytes: int = 0) -> int: ...
    def append_metrics(self, run_id: RunId, points: Iterable[Any]) -> None: ...
    def last_output_seq(self, run_id: RunId) -> int: ...
    def metrics_for(self, run_id: RunId, since: int = 0) -> list[Any]: ...


Publish = Callable[[NotebookId, list[Message]], None]


class NotebookLocks:
    """One re-entrant lock per notebook: orders store+broadcast against replay+join."""

    def __init__(self) -> None:
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def __call__(self, notebook_id: str) -> threading.RLock:
        with self._guard:
            lock = self._locks.get(notebook_id)
            if lock is None:
                lock = self._locks[notebook_id] = threading.RLock()
            return lock


@dataclass
class _RunBuffer:
    notebook_id: NotebookId
    cell_id: CellId
    next_seq: int = 1
    next_metric_seq: int = 1
    items: list[OutputEvent] = field(default_factory=list)
    metrics: list[MetricsEvent] = field(default_factory=list)
    collapser: StreamCollapser = field(default_factory=StreamCollapser)
    flush_lock: threading.Lock = field(default_factory=threading.Lock)


def split_text(text: str, limit: int = CHUNK_MAX_CHARS) -> list[str]:
    """Cut text into pieces of at most `limit` chars, at line ends where possible."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = text.rfind("\n", 0, limit) + 1 or limit
        pieces.append(text[:cut])
        text = text[cut:]
    if text:
        pieces.append(text)
    return pieces


def merge(items: list[OutputEvent]) -> list[tuple[str, str, str]]:
    """(source, stream, text) per key, in order of first appearance within the batch.

    Grouping by key (not only consecutive items) keeps two actors that print in turn from
    producing one event per line; order within each source and stream is kept, and order across
    sources inside one 50 ms window means little (Ray forwards each actor's lines on its own).
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for item in items:
        groups.setdefault((item.source, item.stream), []).append(item.text)
    return [(src, stream, "".join(texts)) for (src, stream), texts in groups.items()]


class OutputBatcher:
    """Per-run buffers of OutputEvent/MetricsEvent, flushed by one background thread."""

    def __init__(self, sink: RunSink, publish: Publish, locks: NotebookLocks, interval: float = 0.05) -> None:
        self.sink = sink
        self.publish = publish
        self.locks = locks
        self.interval = interval
        self._runs: dict[RunId, _RunBuffer] = {}
        self._dirty: set[RunId] = set()
        self._cond = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="output-batcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._thread:
            self._thread.join(timeout=5)
        self.flush_all()

    def open_run(self, run_id: RunId, notebook_id: NotebookId, cell_id: CellId) -> None:
        with self._cond:
            if run_id not in self._runs:
                self._runs[run_id] = _RunBuffer(notebook_id, cell_id)

    def close_run(self, run_id: RunId) -> None:
        """Flush and forget a finished run; late output reopens it from the store's last seq."""
        self.flush_run(run_id)
        with self._cond:
            buf = self._runs.get(run_id)
            if buf is not None and not buf.items and not buf.metrics:
                del self._runs[run_id]

    def add(self, msg: OutputEvent | MetricsEvent) -> None:
        """Queue one event that already names its notebook, cell and run."""
        with self._cond:
            buf = self._runs.get(msg.run_id)
            if buf is None:
                buf = self._reopen(msg)
            if isinstance(msg, OutputEvent):
                if not msg.text:
                    return
                buf.items.append(msg)
            else:
                buf.metrics.append(msg)
            if msg.run_id not in self._dirty:
                self._dirty.add(msg.run_id)
                self._cond.notify()

    def _reopen(self, msg: OutputEvent | MetricsEvent) -> _RunBuffer:
        buf = _RunBuffer(msg.notebook_id, msg.cell_id)
        try:
            buf.next_seq = self.sink.last_output_seq(msg.run_id) + 1
            buf.next_metric_seq = len(self.sink.metrics_for(msg.run_id)) + 1
        except Exception:  # a store hiccup must not lose output; seq 1 is the guess
            log.exception("reading the last seq of run %s failed", msg.run_id)
        self._runs[msg.run_id] = buf
        return buf

    def _loop(self) -> None:
        last = 0.0
        while True:
            with self._cond:
                while not self._dirty and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
            # At most one flush per interval: a line after a quiet spell goes out at once, and a
            # burst becomes a few events a second instead of thousands.
            wait = last + self.interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            last = time.monotonic()
            self.flush_all()

    def flush_all(self) -> None:
        with self._cond:
            dirty, self._dirty = self._dirty, set()
        for run_id in dirty:
            self.flush_run(run_id)

    def flush_run(self, run_id: RunId) -> None:
        """Store then broadcast everything queued for run_id; safe to call from any thread."""
        with self._cond:
            buf = self._runs.get(run_id)
        if buf is None:
            return
        with buf.flush_lock:
            with self._cond:
                items, buf.items = buf.items, []
                metrics, buf.metrics = buf.metrics, []
                self._dirty.discard(run_id)
            if not items and not metrics:
                return
            events = self._number(run_id, buf, items)
            points = []
            for m in metrics:
                points.append(dataclasses.replace(
                    m, notebook_id=buf.notebook_id, cell_id=buf.cell_id, run_id=run_id,
                    seq=buf.next_metric_seq, ts=m.ts or time.time()))
                buf.next_metric_seq += 1
            with self.locks(buf.notebook_id):
                self._store(run_id, events, points)
                self.publish(buf.notebook_id, [*events, *points])

    def _number(self, run_id: RunId, buf: _RunBuffer, items: list[OutputEvent]) -> list[OutputEvent]:
        events: list[OutputEvent] = []
        for source, stream, raw in merge(items):
            wire = buf.collapser.feed(source, stream, raw)
            for piece in split_text(wire):
                events.append(OutputEvent(
                    text=piece, source=source, stream=stream, notebook_id=buf.notebook_id,
                    cell_id=buf.cell_id, run_id=run_id, seq=buf.next_seq))
                buf.next_seq += 1
        return events

    def _store(self, run_id: RunId, events: list[OutputEvent], points: list[MetricsEvent]) -> None:
        # A store failure is logged, and the viewers still get the output live.
        try:
            if events:
                self.sink.append_output(run_id, events)
            if points:
                self.sink.append_metrics(run_id, points)
        except Exception:
            log.exception("storing output of run %s failed", run_id)
