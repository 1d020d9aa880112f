"""The worker's end of the kernel pipe: the channel, and the stdout/stderr that write to it.

Its own module so that main.py (which installs the streams) and cell.py (which runs a cell with
them) both import it and neither imports the other.
"""
from __future__ import annotations

import io
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import cast

from console.actors.capture import (METRICS, ForwardedPieces, KerasMetrics, LineRedraw, decode_forwarded, ray_pid,
                                    split_ray_prefix, stream_of)
from console.wire.channel import TRUSTED_LINE_CAP, Channel as WireChannel, ProtocolError
from console.wire.codec import Message
from console.wire.worker import TO_WORKER, CellMetrics, CellOutput, Stream


# Printed text is sent in batches: one pipe message per line made a cell printing 500,000 lines
# spend most of its time pickling and the kernel most of its time unpickling and forwarding.
BATCH_SECONDS = 0.01  # the longest a printed line waits in the worker
BATCH_CHARS = 64 * 1024
# An unfinished line of the cell's longer than this is sent as it stands and continued by
# appends (console/actors/capture.py LineRedraw): below it, each write copies the line.
LONG_LINE = 4096


def _flusher(name: str, wake: threading.Condition, since: Callable[[], float | None],
             flush: Callable[[], None]) -> threading.Thread:
    """A daemon thread that calls `flush` (under `wake`'s lock) once what is waiting has waited
    BATCH_SECONDS; `since` says when the oldest waiting text came, or None when nothing waits."""

    def loop() -> None:
        with wake:
            while True:
                first = since()
                if first is None:
                    wake.wait()
                    continue
                left = first + BATCH_SECONDS - time.monotonic()
                if left > 0:
                    wake.wait(left)  # new text wakes it early: it looks again
                else:
                    flush()

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    return thread


class Channel:
    """The worker's end of the socket pair; sends are shared by threads, recv stays on the main one.

    CellOutput text of one job, source and stream is joined until BATCH_CHARS or BATCH_SECONDS;
    any other message (metrics, CellDone) and an explicit flush send the batch first, so order
    and the end-of-cell guarantee hold.
    """

    def __init__(self, fd: int) -> None:
        # The kernel started this process: its messages are trusted to be long (a cell's code).
        self.wire = WireChannel(TO_WORKER, read=fd, write=fd, line_cap=TRUSTED_LINE_CAP, name="kernel->worker")
        self._incoming: Iterator[Message] = self.wire.messages()
        self.lock = threading.Lock()
        self.job_id = ""  # the running cell's; "" between cells (the kernel ignores that output)
        self._texts: list[str] = []
        self._key: tuple[str, str, str] = ("", "", "")
        self._chars = 0
        self._first_at = 0.0
        self._wake = threading.Condition(self.lock)
        self._flusher: threading.Thread | None = None
        # The streams' side (ChannelStream): one lock for stdout and stderr, so their text keeps
        # its order, and the stream holding the cell thread's unprocessed writes (at most one).
        self.stream_lock = threading.RLock()
        self.held: "ChannelStream | None" = None
        self._held_wake = threading.Condition(self.stream_lock)
        self._held_flusher: threading.Thread | None = None

    def hold(self, stream: "ChannelStream") -> None:
        """`stream` now holds the cell's writes: they go out within BATCH_SECONDS (stream_lock held)."""
        self.held = stream
        if self._held_flusher is None:
            self._held_flusher = _flusher("channel-held", self._held_wake,
                                          lambda: None if self.held is None else self.held.held_since,
                                          lambda: self.held.release() if self.held is not None else None)
        self._held_wake.notify()

    def send(self, msg: Message) -> None:
        with self.stream_lock:  # text the cell printed before (a display(), a CellDone) goes first
            if self.held is not None:
                self.held.release()
            with self.lock:
                self._send_batch()
                self._send(msg)

    def output(self, text: str, source: str, stream: str) -> None:
        """Queue printed text; it goes out within BATCH_SECONDS.

        Text a thread of a cell's own prints is that cell's job's (see tag_cell_threads), even
        while a later cell runs: the kernel then keeps it out of the later run (issue 29: a
        co-runner's thread wrote into another runner's run, stored as theirs).
        """
        job_id = origin_job() or self.job_id
        with self.lock:
            key = (job_id, source, stream)
            if text.startswith("\r"):
                # A redraw (a progress bar) goes alone, as it was written: few, and it is the
                # live state a viewer watches, so it is not held back either.
                self._send_batch()
                self._send(CellOutput(job_id=job_id, text=text, source=source, stream=cast(Stream, stream)))
                return
            if self._texts and key != self._key:
                self._send_batch()
            self._key = key
            self._texts.append(text)
            self._chars += len(text)
            if self._chars >= BATCH_CHARS:
                self._send_batch()
            elif len(self._texts) == 1:
                self._first_at = time.monotonic()
                if self._flusher is None:
                    self._flusher = _flusher("channel-batch", self._wake,
                                             lambda: self._first_at if self._texts else None, self._send_batch)
                self._wake.notify()

    def flush(self) -> None:
        with self.lock:
            self._send_batch()

    def _send_batch(self) -> None:
        """Send the queued text (the lock is held)."""
        if not self._texts:
            return
        job_id, source, stream = self._key
        text = "".join(self._texts)
        self._texts, self._chars = [], 0
        self._send(CellOutput(job_id=job_id, text=text, source=source, stream=cast(Stream, stream)))

    def _send(self, msg: Message) -> None:
        self.wire.send(msg)  # False: the kernel went away; the main loop will notice on recv

    def recv(self) -> Message:
        """The kernel's next message; EOFError once it has closed the socket."""
        try:
            return next(self._incoming)
        except (StopIteration, ProtocolError) as exc:
            raise EOFError(str(exc)) from None


CELL_FILE = "<cell>"  # the file name cells are compiled under (worker/cell.py)


def origin_job() -> str:
    """The job whose cell started the current thread, or "" (the cell's own thread, Ray's, a library's)."""
    return str(getattr(threading.current_thread(), "_console_job", "") or "")


def tag_cell_threads(channel: Channel) -> None:
    """Threads a cell's code starts carry that cell's job id, and so do the threads they start.

    Only threads whose code is the cell's (a target or a run() compiled from `<cell>`), or that a
    tagged thread starts: the worker's own threads and Ray's log thread (which prints every
    actor's lines) keep writing into whichever cell runs, as before.
    """
    start = threading.Thread.start
    if getattr(start, "_console_tagging", False):
        return

    def tagged_start(thread: threading.Thread) -> None:
        if not getattr(thread, "_console_job", ""):
            parent = origin_job()
            if parent:
                thread._console_job = parent  # type: ignore[attr-defined]
            elif _cell_code(thread) and channel.job_id:
                thread._console_job = channel.job_id  # type: ignore[attr-defined]
        start(thread)

    tagged_start._console_tagging = True  # type: ignore[attr-defined]
    threading.Thread.start = tagged_start  # type: ignore[method-assign, assignment]


def _cell_code(thread: threading.Thread) -> bool:
    target = getattr(thread, "_target", None)
    run = getattr(type(thread), "run", None)
    for fn in (target, run):
        code = getattr(fn, "__code__", None)
        if code is not None and code.co_filename == CELL_FILE:
            return True
    return False


class ChannelStream(io.TextIOBase):
    """sys.stdout/stderr of the worker: chunks tagged with their source go to the kernel.

    Each thread has its own line state, so the cell's partial lines never mix with the lines
    Ray's log thread prints for actors ("(Network pid=12) text").
    """

    def __init__(self, channel: Channel, stream: str, metrics: KerasMetrics, arrived: threading.Event) -> None:
        self.channel = channel
        self.stream = stream
        self.metrics = metrics
        self.lock = channel.stream_lock  # shared with the other stream: one order for both
        self.lines: dict[int, LineRedraw] = {}
        # Plain text the cell's thread writes (no "\r", no "\b") is held as it came and looked
        # at a block at a time: a cell printing 500,000 lines spent ~7 µs a line in the per-line
        # path (the redraw state, the actor-prefix and metrics patterns) against 1 µs for print()
        # to a file. The lines of a block go one by one only when one might be an actor's or a
        # Keras line, or on stderr (library notices).
        self.cell_thread = threading.get_ident()
        self.held: list[str] = []
        self.held_chars = 0
        self.held_since = 0.0
        self.last_forwarded = 0.0
        self.forwarded: Counter[int] = Counter()  # actor lines received, per pid (see actorlogs.py)
        self.arrived = arrived  # set on each forwarded actor line: the end-of-cell drain waits on it
        self.pieces = ForwardedPieces()  # actor lines Ray's log monitor cut in two, until whole

    def _line_state(self) -> LineRedraw:
        return self._line_state_of(threading.get_ident())

    def _line_state_of(self, tid: int) -> LineRedraw:
        state = self.lines.get(tid)
        if state is None:
            # The cell's own unfinished line goes out past LONG_LINE; another thread's (Ray's log
            # thread writes an actor's line, then its "\n") only past a size no such line has.
            long_line = LONG_LINE if tid == self.cell_thread else 1 << 20
            state = self.lines[tid] = LineRedraw(self._chunk, long_line=long_line)
        return state

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self.lock:
            if threading.get_ident() == self.cell_thread and "\r" not in text and "\b" not in text:
                if self.channel.held is not self:
                    if self.channel.held is not None:
                        self.channel.held.release()  # the other stream's text goes first
                    self.held_since = time.monotonic()
                    self.channel.hold(self)
                self.held.append(text)
                self.held_chars += len(text)
                if self.held_chars >= BATCH_CHARS:
                    self.release()
                return len(text)
            if self.channel.held is not None:
                self.channel.held.release()
            self._line_state().write(text)
        return len(text)

    def release(self) -> None:
        """Process the held writes (the lock is held)."""
        if self.channel.held is self:
            self.channel.held = None
        if not self.held:
            return
        text = "".join(self.held)
        self.held, self.held_chars = [], 0
        state = self._line_state_of(self.cell_thread)
        cut = text.rfind("\n")
        if cut >= 0:
            block, text = text[:cut + 1], text[cut + 1:]
            if state.pending or state.last or state.appended:  # the first line finishes one already begun
                first = block.index("\n") + 1
                state.write(block[:first])
                block = block[first:]
            if block:
                if self.stream == "stdout" and "pid=" not in block and METRICS not in block and "/" not in block:
                    self.channel.output(block, "driver", "stdout")  # no actor line, no Keras line
                else:
                    for line in block[:-1].split("\n"):
                        self._chunk(line + "\n")
        state.write(text)  # the unfinished line (past LONG_LINE it goes out as it stands)

    def flush(self) -> None:
        with self.lock:
            if self.channel.held is not None:
                self.channel.held.release()
            self._line_state().flush()
        self.channel.flush()  # a flush orders this text before what the cell writes next elsewhere

    def flush_all(self) -> None:
        with self.lock:
            if self.channel.held is not None:
                self.channel.held.release()
            for source, piece in self.pieces.drain():  # the rest never came: shown as it is
                self._forwarded(source, piece)
            for state in self.lines.values():
                state.flush()
            self.lines.clear()
        self.channel.flush()

    def _chunk(self, chunk: str) -> None:
        source = "driver"
        if chunk.endswith("\n") and not chunk.startswith("\r"):
            prefixed, text = split_ray_prefix(chunk[:-1])
            if prefixed is not None:
                self.last_forwarded = time.monotonic()
                self.arrived.set()
                whole = self.pieces.feed(prefixed, text)
                if whole is not None:
                    self._forwarded(prefixed, whole)
                return
            if chunk.startswith(METRICS):
                _, values = decode_forwarded(chunk[:-1])
                if values is not None:
                    self._metrics(values.get("values", {}), source, values.get("step"))
                    return
        self._show(chunk, source)

    def _forwarded(self, source: str, text: str) -> None:
        """One whole line an actor wrote, as Ray forwarded it ("(Printer pid=12) text")."""
        pid = ray_pid(source)
        if pid is not None:
            self.forwarded[pid] += 1
        chunk, values = decode_forwarded(text)
        if values is not None:
            self._metrics(values.get("values", {}), source, values.get("step"))
        else:
            self._show(chunk, source)

    def _show(self, chunk: str, source: str) -> None:
        if not chunk:
            return
        self.channel.output(chunk, source, stream_of(self.stream, chunk))
        found = self.metrics.feed(source, chunk)
        if found is not None:
            self._metrics(found[0], source, found[1])

    def _metrics(self, values: dict[str, float], source: str, step: int | None) -> None:
        finite = {str(k): float(v) for k, v in values.items()
                  if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
        if finite:  # a NaN loss is no point on a chart, and the kernel refuses it
            self.channel.send(CellMetrics(job_id=self.channel.job_id, values=finite, source=source,
                                          step=step if isinstance(step, int) and not isinstance(step, bool) else None))

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"
