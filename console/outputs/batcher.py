"""Batch a run's output every ~50 ms: merge, collapse redraws, number, write the log file, store, THEN broadcast.

Storing before broadcasting is what makes replay exact: anything a viewer saw live is in the
store under its seq (or in the hidden middle of a big output, which the replay marks), and the
per-notebook lock (held around store+broadcast here, and around replay+room-join in the socket
layer) means a joining viewer gets every chunk exactly once.

With a data folder, each run's whole log goes to its gzip file (logfile.py) before the batch is
stored, and the database keeps only the head and tail the inline plan shows (keeper.py). Image
chunks (stream "image", one base64 PNG each) are never merged, split or collapsed.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from console.clock import Clock, SystemClock
from console.ids import CellId, NotebookId, RunId
from console.outputs.collapse import StreamCollapser
from console.outputs.keeper import RunKeeper
from console.outputs.live import LiveTail
from console.outputs.logfile import LogFolder, LogWriter
from console.wire.browser import MetricsEvent, OutputEvent
from console.wire.codec import Message

log = logging.getLogger(__name__)

# A stored chunk stays under this size, so head/tail truncation of big logs is fine-grained
# (a burst of 1 MB/s is still only ~250 events a second).
CHUNK_MAX_CHARS = 4096
IMAGE = "image"  # OutputEvent stream whose text is one base64 PNG


class RunSink(Protocol):
    """The store functions the batcher needs (console.store.Store has them)."""

    def append_output(self, run_id: RunId, chunks: Iterable[Any], hidden_bytes: int = 0, *,
                      skipped_bytes: int = 0, drop: tuple[int, int] | None = None) -> int: ...
    def set_log_file(self, run_id: RunId, path: str) -> None: ...
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
    keeper: RunKeeper | None = None  # None: every chunk is a row (no log file, or a reopened run)
    log: LogWriter | None = None
    log_failed: bool = False
    live: LiveTail = field(default_factory=LiveTail)


def split_text(text: str, limit: int = CHUNK_MAX_CHARS) -> list[str]:
    """Cut text into pieces of at most `limit` chars, at line ends where possible."""
    pieces: list[str] = []
    start, end = 0, len(text)
    # Offsets, not `text = text[cut:]`: that copied the rest of a big batch for every piece.
    while end - start > limit:
        cut = text.rfind("\n", start, start + limit) + 1 or start + limit
        pieces.append(text[start:cut])
        start = cut
    if start < end:
        pieces.append(text[start:] if start else text)
    return pieces


def merge(items: list[OutputEvent]) -> list[tuple[str, str, str]]:
    """(source, stream, text) per key, in order of first appearance within the batch.

    Grouping by key (not only consecutive items) keeps two actors that print in turn from
    producing one event per line; order within each source and stream is kept, and order across
    sources inside one 50 ms window means little (Ray forwards each actor's lines on its own).
    """
    groups: dict[tuple[str, str, int], list[str]] = {}
    for n, item in enumerate(items):
        # An image is one picture: each stays a chunk of its own, in its place among the groups.
        groups.setdefault((item.source, item.stream, n if item.stream == IMAGE else -1), []).append(item.text)
    return [(src, stream, "".join(texts)) for (src, stream, _), texts in groups.items()]


class OutputBatcher:
    """Per-run buffers of OutputEvent/MetricsEvent, flushed by one background thread."""

    def __init__(self, sink: RunSink, publish: Publish, locks: NotebookLocks, interval: float = 0.05, *,
                 data_dir: Path | None = None, inline_bytes: int | None = None, clock: Clock | None = None) -> None:
        """data_dir: where runs' log files go (none without it, and every chunk is then a row);
        inline_bytes: the inline plan's budget, what the database keeps of a run with a log file;
        clock: what paces the flushes and the live tail (a test moves a MovableClock instead of
        racing the wall clock)."""
        self.clock: Clock = clock or SystemClock()
        self._stop_event = threading.Event()
        self.sink = sink
        self.publish = publish
        self.locks = locks
        self.interval = interval
        self.data_dir = data_dir
        self.logs = LogFolder(data_dir) if data_dir is not None else None
        self.inline_bytes = inline_bytes
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
        self._stop_event.set()  # ends the loop's pause between flushes
        if self._thread:
            self._thread.join(timeout=5)
        self.flush_all()

    def open_run(self, run_id: RunId, notebook_id: NotebookId, cell_id: CellId) -> None:
        with self._cond:
            if run_id not in self._runs:
                buf = self._runs[run_id] = _RunBuffer(notebook_id, cell_id)
                if self.data_dir is not None and self.inline_bytes is not None:
                    buf.keeper = RunKeeper(self.inline_bytes)

    def close_run(self, run_id: RunId) -> None:
        """Flush and forget a finished run; late output reopens it from the store's last seq."""
        self.flush_run(run_id)
        with self._cond:
            buf = self._runs.get(run_id)
            if buf is not None and not buf.items and not buf.metrics:
                del self._runs[run_id]
            else:
                buf = None
        if buf is not None and buf.log is not None:
            with buf.flush_lock:
                buf.log.close()

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
            wait = last + self.interval - self.clock.monotonic()
            if wait > 0 and self.clock.sleep(wait, self._stop_event):
                return
            last = self.clock.monotonic()
            self.flush_all(live_wait=True)

    def flush_all(self, live_wait: bool = False) -> None:
        with self._cond:
            dirty, self._dirty = self._dirty, set()
        for run_id in dirty:
            self.flush_run(run_id, live_wait)

    def flush_run(self, run_id: RunId, live_wait: bool = False) -> None:
        """Store then broadcast everything queued for run_id; safe to call from any thread.

        live_wait: the background loop's flush, which may hold back a big run's live update
        (live.py); any other caller (the run's end) gets everything published now.
        """
        with self._cond:
            buf = self._runs.get(run_id)
        if buf is None:
            return
        with buf.flush_lock:
            with self._cond:
                items, buf.items = buf.items, []
                metrics, buf.metrics = buf.metrics, []
                self._dirty.discard(run_id)
            if not items and not metrics and not buf.live.waiting:
                return
            events = self._number(run_id, buf, items)
            if events:
                # Before the store: the file always holds at least what the database has
                # (logfile.repair trims the rest after a crash). Outside the notebook's lock, so
                # compressing a big batch never holds up a viewer's join.
                self._write_log(run_id, buf, events)
            points = []
            for m in metrics:
                points.append(dataclasses.replace(
                    m, notebook_id=buf.notebook_id, cell_id=buf.cell_id, run_id=run_id,
                    seq=buf.next_metric_seq, ts=m.ts or self.clock.now().timestamp()))
                buf.next_metric_seq += 1
            with self.locks(buf.notebook_id):
                self._store(run_id, buf, events, points)
                live = buf.live.take(events, buf.keeper if buf.log is not None else None,
                                     self.clock.monotonic(), force=not live_wait)
                if live or points:
                    self.publish(buf.notebook_id, [*live, *points])
            if buf.live.waiting:  # held back: the loop comes again within its interval
                with self._cond:
                    self._dirty.add(run_id)
                    self._cond.notify()

    def _number(self, run_id: RunId, buf: _RunBuffer, items: list[OutputEvent]) -> list[OutputEvent]:
        events: list[OutputEvent] = []
        for source, stream, raw in merge(items):
            wire = raw if stream == IMAGE else buf.collapser.feed(source, stream, raw)
            for piece in [wire] if stream == IMAGE else split_text(wire):
                events.append(OutputEvent(
                    text=piece, source=source, stream=stream, notebook_id=buf.notebook_id,
                    cell_id=buf.cell_id, run_id=run_id, seq=buf.next_seq))
                buf.next_seq += 1
        return events

    def _write_log(self, run_id: RunId, buf: _RunBuffer, events: list[OutputEvent]) -> None:
        if self.logs is None or buf.log_failed:
            return
        try:
            if buf.log is None:
                # The ids are the server's own (kernels.py stamps every event it accepts).
                buf.log = self.logs.writer(buf.notebook_id, run_id)
                self.sink.set_log_file(run_id, buf.log.rel)
            buf.log.write(events, events[-1].seq)
        except Exception:
            # Without its file the run keeps every chunk as a row, as before log files.
            log.exception("writing the log file of run %s failed; its output stays in the database", run_id)
            buf.log_failed, buf.keeper = True, None

    def _store(self, run_id: RunId, buf: _RunBuffer, events: list[OutputEvent], points: list[MetricsEvent]) -> None:
        # A store failure is logged, and the viewers still get the output live.
        try:
            if events and buf.keeper is not None and buf.log is not None:
                keep = buf.keeper.batch(events)
                self.sink.append_output(run_id, keep.store, keep.hidden_bytes,
                                        skipped_bytes=keep.skipped_bytes, drop=keep.drop)
            elif events:
                self.sink.append_output(run_id, events)
            if points:
                self.sink.append_metrics(run_id, points)
        except Exception:
            log.exception("storing output of run %s failed", run_id)
