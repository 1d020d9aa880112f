"""The worker's end of the kernel pipe: the channel, and the stdout/stderr that write to it.

Its own module so that main.py (which installs the streams) and cell.py (which runs a cell with
them) both import it and neither imports the other.
"""
from __future__ import annotations

import io
import threading
import time
from collections import Counter
from multiprocessing.connection import Connection

from console.actors.capture import (METRICS, KerasMetrics, LineRedraw, decode_forwarded, ray_pid, split_ray_prefix,
                                    stream_of)
from console.messages import CellMetrics, CellOutput, Message


# Printed text is sent in batches: one pipe message per line made a cell printing 500,000 lines
# spend most of its time pickling and the kernel most of its time unpickling and forwarding.
BATCH_SECONDS = 0.01  # the longest a printed line waits in the worker
BATCH_CHARS = 64 * 1024


class Channel:
    """The worker's end of the socket pair; sends are shared by threads, recv stays on the main one.

    CellOutput text of one job, source and stream is joined until BATCH_CHARS or BATCH_SECONDS;
    any other message (metrics, CellDone) and an explicit flush send the batch first, so order
    and the end-of-cell guarantee hold.
    """

    def __init__(self, fd: int) -> None:
        self.conn = Connection(fd)
        self.lock = threading.Lock()
        self.job_id = ""  # the running cell's; "" between cells (the kernel ignores that output)
        self._texts: list[str] = []
        self._key: tuple[str, str, str] = ("", "", "")
        self._chars = 0
        self._first_at = 0.0
        self._wake = threading.Condition(self.lock)
        self._flusher: threading.Thread | None = None

    def send(self, msg: Message) -> None:
        with self.lock:
            self._send_batch()
            self._send(msg)

    def output(self, text: str, source: str, stream: str) -> None:
        """Queue printed text; it goes out within BATCH_SECONDS."""
        with self.lock:
            key = (self.job_id, source, stream)
            if text.startswith("\r"):
                # A redraw (a progress bar) goes alone, as it was written: few, and it is the
                # live state a viewer watches, so it is not held back either.
                self._send_batch()
                self._send(CellOutput(job_id=self.job_id, text=text, source=source, stream=stream))
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
                    self._flusher = threading.Thread(target=self._flush_loop, name="channel-batch", daemon=True)
                    self._flusher.start()
                self._wake.notify()

    def flush(self) -> None:
        with self.lock:
            self._send_batch()

    def _flush_loop(self) -> None:
        with self.lock:
            while True:
                while not self._texts:
                    self._wake.wait()
                left = self._first_at + BATCH_SECONDS - time.monotonic()
                if left > 0:
                    self._wake.wait(left)  # a new batch's first text wakes it early: it looks again
                else:
                    self._send_batch()

    def _send_batch(self) -> None:
        """Send the queued text (the lock is held)."""
        if not self._texts:
            return
        job_id, source, stream = self._key
        text = "".join(self._texts)
        self._texts, self._chars = [], 0
        self._send(CellOutput(job_id=job_id, text=text, source=source, stream=stream))

    def _send(self, msg: Message) -> None:
        try:
            self.conn.send(msg)
        except (OSError, ValueError):
            pass  # the kernel went away; the main loop will notice on recv

    def recv(self) -> Message:
        msg = self.conn.recv()
        assert isinstance(msg, Message), f"not a pipe message: {msg!r}"
        return msg


class ChannelStream(io.TextIOBase):
    """sys.stdout/stderr of the worker: chunks tagged with their source go to the kernel.

    Each thread has its own line state, so the cell's partial lines never mix with the lines
    Ray's log thread prints for actors ("(Network pid=12) text").
    """

    def __init__(self, channel: Channel, stream: str, metrics: KerasMetrics, arrived: threading.Event) -> None:
        self.channel = channel
        self.stream = stream
        self.metrics = metrics
        self.lock = threading.RLock()
        self.lines: dict[int, LineRedraw] = {}
        self.last_forwarded = 0.0
        self.forwarded: Counter[int] = Counter()  # actor lines received, per pid (see actorlogs.py)
        self.arrived = arrived  # set on each forwarded actor line: the end-of-cell drain waits on it

    def _line_state(self) -> LineRedraw:
        tid = threading.get_ident()
        state = self.lines.get(tid)
        if state is None:
            state = self.lines[tid] = LineRedraw(self._chunk)
        return state

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self.lock:
            self._line_state().write(text)
        return len(text)

    def flush(self) -> None:
        with self.lock:
            self._line_state().flush()
        self.channel.flush()  # a flush orders this text before what the cell writes next elsewhere

    def flush_all(self) -> None:
        with self.lock:
            for state in self.lines.values():
                state.flush()
            self.lines.clear()
        self.channel.flush()

    def _chunk(self, chunk: str) -> None:
        source = "driver"
        if chunk.endswith("\n") and not chunk.startswith("\r"):
            prefixed, text = split_ray_prefix(chunk[:-1])
            if prefixed is not None:
                source = prefixed
                self.last_forwarded = time.monotonic()
                pid = ray_pid(prefixed)
                if pid is not None:
                    self.forwarded[pid] += 1
                self.arrived.set()
                chunk, values = decode_forwarded(text)
                if values is not None:
                    self._metrics(values.get("values", {}), source, values.get("step"))
                    return
            elif chunk.startswith(METRICS):
                _, values = decode_forwarded(chunk[:-1])
                if values is not None:
                    self._metrics(values.get("values", {}), source, values.get("step"))
                    return
        if not chunk:
            return
        self.channel.output(chunk, source, stream_of(self.stream, chunk))
        found = self.metrics.feed(source, chunk)
        if found is not None:
            self._metrics(found[0], source, found[1])

    def _metrics(self, values: dict[str, float], source: str, step: int | None) -> None:
        self.channel.send(CellMetrics(job_id=self.channel.job_id, values=values, source=source, step=step))

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"
