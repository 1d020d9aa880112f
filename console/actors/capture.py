"""Output capture: progress-bar redraws as chunks, Ray's actor prefixes, Keras lines as metrics.

Stdlib only, because it also runs inside every Ray worker (the setup hook) and in the cell
worker before anything else is imported.

The text model: each source (the driver, or one actor) has a stream of chunks whose
concatenation is what a terminal would show. A chunk ending in "\\n" is a finished line; a chunk
starting with "\\r" and not ending in "\\n" is a redraw of the current line (a progress bar in
flight). Ray forwards only whole lines, so inside actors a redraw is written as a line starting
with REDRAW (or REDRAW_END when it finishes the line) and turned back into "\\r…" by the driver.
"""
from __future__ import annotations

import io
import json
import os
import re
import sys
import threading
from typing import Callable, TextIO

REDRAW = "\ue000"  # private-use marks: never produced by real programs
REDRAW_END = "\ue002"
METRICS = "\ue001"
# Each line an actor's ActorStream writes is LINE_START + line + LINE_END. Ray's log monitor reads
# the worker's file with readline(), which at the end of the file returns a line still being
# written: a write that crosses a page boundary of the file becomes visible page by page, so
# "B line 3162" went out as two lines, "B " and "line 3162" (one in a few thousand lines under
# load). The marks let the driver see a piece and join it with the rest (ForwardedPieces).
# One byte each (ASCII control characters), so a page boundary can never cut a mark in two.
LINE_START = "\x02"
LINE_END = "\x03"
# A character of more than one byte that a page boundary cut came out of Ray as two replacement
# characters (the log monitor decodes each piece on its own). So no character may straddle a
# page of the file: FILLER bytes go before one that would, and the driver drops them. The line's
# own FILLER and ESCAPE characters go as ESCAPE + the character, so nothing the actor printed is
# lost. All three are one-byte ASCII control characters, which no boundary can cut.
FILLER = "\x01"
ESCAPE = "\x04"
PAGE = 4096  # the page cache's unit on Linux: what a reader can see of a write in progress
_UNFRAME = re.compile("\x04(.)|\x01", re.S)
# Lines Ray's worker prints for its log monitor (which reads them and forwards nothing): written
# without the marks, or the monitor no longer knows the actor's name or job.
RAY_MARKERS = (":job_id:", ":actor_name:", ":task_name:", ":task_attempt_start:", ":task_attempt_end:")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_RAY_PREFIX = re.compile(r"^\((?:(?P<name>[^()\s]+) )?pid=(?P<pid>\d+)(?:, ip=(?P<ip>[^)]+))?\) ?(?P<text>.*)$", re.S)
# "16/16 [====] - 0s 1ms/step - loss: 2.38 - accuracy: 0.11" (tf-keras verbose=1), the
# verbose=2 form "16/16 - 0s - loss: …", and Keras 3's "16/16 ━━━━ 0s 2ms/step - accuracy: …".
_PROGRESS = re.compile(r"^\s*(\d+)/(\d+)\b")
_METRIC = re.compile(r"(?:^|\s-\s)([A-Za-z_][\w.]*): (-?[0-9.]+(?:e[-+]?\d+)?|nan|inf)\b")
_EPOCH = re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")

Chunk = Callable[[str], None]
# LineRedraw.last after a carriage return over a line sent in pieces: the screen shows text the
# next chunk must replace. Never equal to a line's text (a line holds no "\r").
_REPLACED = "\r"


class LineRedraw:
    """Turns writes into chunks: finished lines, and "\\r…" redraws on flush or carriage return.

    With `long_line`, a line that grows past it unfinished (a million `print(".", end="")`) is
    sent as it stands and continued by plain appends: holding it whole made every write copy
    it (a 100 MB line took minutes) and every flush resend it. Only the cell worker's streams
    use it; an actor's chunks cross Ray's line-by-line forwarding, which has no append.

    appends=False: a flushed line that only grew is sent whole ("\\r" + the line) like any other
    redraw, never as the new text alone (ActorStream: a forwarded line can only replace).
    """

    def __init__(self, out: Chunk, long_line: int | None = None, appends: bool = True) -> None:
        self.out = out
        self.long_line = long_line
        self.appends = appends
        self.pending = ""  # text of the current line not yet sent
        self.last = ""  # what the current screen line shows from earlier redraws
        self.appended = False  # the line was sent in plain pieces; `pending` continues it

    def write(self, text: str) -> None:
        text = text.replace("\b", "")  # tf-keras erases its bar with backspaces before "\r"
        start = 0
        for m in re.finditer(r"\r\n|\n|\r", text):
            self.pending += text[start:m.start()]
            start = m.end()
            if m.group() == "\r":
                self.flush()
                if self.appended:  # what follows replaces the pieces on screen
                    self.appended, self.last = False, _REPLACED
                self.pending = ""
            else:
                self.out(("\r" if self.last else "") + self.pending + "\n")
                self.pending = self.last = ""
                self.appended = False
        self.pending += text[start:]
        if self.long_line is not None and len(self.pending) > self.long_line:
            self.out(("\r" if self.last else "") + self.pending)  # the screen shows it: appends follow
            self.pending = self.last = ""
            self.appended = True

    def flush(self) -> None:
        if self.appended:
            if self.pending:
                self.out(self.pending)
                self.pending = ""
        elif self.pending and self.pending != self.last:
            grew = self.appends and self.last not in ("", _REPLACED) and self.pending.startswith(self.last)
            # A line that only grew (dots, each flushed) gets the new text as an append.
            self.out(self.pending[len(self.last):] if grew else "\r" + self.pending)
            self.last = self.pending


class ActorStream(io.TextIOBase):
    """sys.stdout of a Ray worker: lines as usual, redraws as REDRAW lines so Ray forwards them."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw
        self.lock = threading.Lock()
        # No appends: "Loading" then "..." flushed went out as a redraw of ".." (the append lost
        # its first character as if it were the "\r"), so the live line read ".." until it ended.
        self.lines = LineRedraw(self._chunk, appends=False)

    def _chunk(self, chunk: str) -> None:
        # Forwarded lines never contain "\r": the driver's own line splitting would cut them.
        if not chunk.endswith("\n"):
            line = REDRAW + chunk[1:]
        elif chunk.startswith("\r"):
            line = REDRAW_END + chunk[1:-1]
        elif chunk.startswith(RAY_MARKERS):
            line = ""  # Ray's own marker line: written as Ray wrote it
        else:
            line = chunk[:-1]  # "" for an empty line, which one byte cannot be cut: written as it is
        if not line:
            self.raw.write(chunk)
        else:
            self.raw.flush()  # what was written before is in the file, so its size is our offset
            self.raw.write(page_safe(line, self._offset()))
        # One write: one piece, or pieces in order.
        self.raw.flush()

    def _offset(self) -> int | None:
        """Where the next write lands in the file; None when the stream is no UTF-8 file."""
        if str(getattr(self.raw, "encoding", "")).lower().replace("-", "").replace("_", "") != "utf8":
            return None
        try:
            return os.fstat(self.raw.fileno()).st_size
        except (OSError, ValueError, io.UnsupportedOperation):
            return None

    def write(self, text: str) -> int:
        with self.lock:
            self.lines.write(text)
        return len(text)

    def flush(self) -> None:
        with self.lock:
            self.lines.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", "utf-8")


def page_safe(line: str, offset: int | None, page: int = PAGE) -> str:
    """LINE_START + line + LINE_END + "\\n", with FILLER before each character of more than one
    byte that would straddle a page boundary when written at byte `offset` of the file (None: the
    offset is not known, so nothing is moved)."""
    if FILLER in line or ESCAPE in line:
        line = line.replace(ESCAPE, ESCAPE + ESCAPE).replace(FILLER, ESCAPE + FILLER)
    framed = LINE_START + line + LINE_END + "\n"
    if offset is None or framed.isascii():
        return framed
    data = framed.encode("utf-8", "surrogatepass")
    pos = page - offset % page  # the index in `data` that the next boundary falls on
    if pos >= len(data):
        return framed  # the common case: no boundary inside
    parts: list[bytes] = []
    start = 0
    while pos < len(data):
        lead = pos
        while lead > start and 0x80 <= data[lead] < 0xC0:  # a continuation byte: back to its lead
            lead -= 1
        if lead == pos:
            pos += page
            continue
        parts += [data[start:lead], FILLER.encode() * (pos - lead)]  # the character starts on the boundary
        start, pos = lead, lead + page
    parts.append(data[start:])
    return b"".join(parts).decode("utf-8", "surrogatepass")


def unframe(text: str) -> str:
    """The line page_safe framed, without its FILLER bytes and escapes (LINE_START/END already off)."""
    if FILLER not in text and ESCAPE not in text:
        return text
    return _UNFRAME.sub(lambda m: m.group(1) or "", text)


def actor_setup_hook() -> None:
    """Ray `worker_process_setup_hook`: make progress redraws in this worker reach the driver live."""
    if not isinstance(sys.stdout, ActorStream):
        sys.stdout = ActorStream(sys.stdout)
    if not isinstance(sys.stderr, ActorStream):
        sys.stderr = ActorStream(sys.stderr)


def split_ray_prefix(line: str) -> tuple[str | None, str]:
    """'(Network pid=12) text' -> ('Network pid=12', 'text'); other lines -> (None, line)."""
    m = _RAY_PREFIX.match(line)
    if not m:
        return None, line
    source = f"{m.group('name') + ' ' if m.group('name') else ''}pid={m.group('pid')}"
    if m.group("ip"):
        source += f", ip={m.group('ip')}"
    return source, m.group("text")


# Start-up lines of TensorFlow's C++ runtime (absl logging) that arrive before absl reads
# TF_CPP_MIN_LOG_LEVEL, so that setting cannot hide them: "Could not find cuda drivers",
# oneDNN and CPU-feature notices. Info and warning levels only; errors (E…) stay stderr.
_ABSL_NOTICE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|[IW]\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\] .*"
    r"|To enable the following instructions: .*in other operations, rebuild TensorFlow.*)$")


# "E0000 … failed call to cuInit: … (303)": TensorFlow probing for CUDA. Without an NVIDIA
# driver on the machine this is the expected answer, not an error; with one, it is a real failure.
_CUINIT = re.compile(r"^E\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\] failed call to cuInit: .*\(303\)\s*$")
_GPU_MARKS = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/nvidia0")
_gpu: bool | None = None


def machine_has_gpu() -> bool:
    """True when an NVIDIA driver is visible here (the sandbox shows /proc and the host's devices)."""
    global _gpu
    if _gpu is None:
        _gpu = any(os.path.exists(p) for p in _GPU_MARKS)
    return _gpu


def stream_of(stream: str, line: str, gpu: bool | None = None) -> str:
    """"system" for a library's start-up notice written to stderr; otherwise the stream as is.

    The line is still shown (nothing is dropped), but as a runtime notice, not as the cell's error.
    gpu: whether this machine has a GPU (detected when None); only then is a failed cuInit an error.
    """
    if stream != "stderr":
        return stream
    text = line.rstrip("\n")
    if _ABSL_NOTICE.match(text):
        return "system"
    if _CUINIT.match(text) and not (machine_has_gpu() if gpu is None else gpu):
        return "system"
    return stream


def ray_pid(source: str) -> int | None:
    """The pid in a source made by split_ray_prefix ('Network pid=12' -> 12)."""
    m = re.search(r"\bpid=(\d+)", source)
    return int(m.group(1)) if m else None


class ForwardedPieces:
    """The driver's side of LINE_START/LINE_END: forwarded lines as the actor wrote them.

    Pieces of one line come one after the other from the same file (one write() of the actor's
    is one stretch of its file: nothing else can land inside it), so a piece held for a source
    is joined with that source's next line. Lines without the marks (an actor without our
    setup hook, C code writing to the file descriptor) pass as Ray gave them.
    """

    def __init__(self) -> None:
        self.held: dict[str, str] = {}

    def feed(self, source: str, text: str) -> str | None:
        """The whole line without its marks, or None while `text` is a piece of one."""
        held = self.held.pop(source, None)
        if held is not None:
            text = held + text
        elif not text.startswith(LINE_START):
            return text
        if not text.endswith(LINE_END):
            self.held[source] = text
            return None
        return unframe(text[len(LINE_START):-len(LINE_END)])

    def drain(self) -> list[tuple[str, str]]:
        """(source, text) of each piece still held (the cell ends: shown as it came, not lost)."""
        held = [(source, unframe(text[len(LINE_START):])) for source, text in self.held.items()]
        self.held.clear()
        return held


def decode_forwarded(text: str) -> tuple[str, dict | None]:
    """A line forwarded from an actor -> (chunk, metrics or None). REDRAW lines become "\\r…"."""
    if text.startswith(REDRAW):
        return "\r" + text[len(REDRAW):], None
    if text.startswith(REDRAW_END):
        return "\r" + text[len(REDRAW_END):] + "\n", None
    if text.startswith(METRICS):
        try:
            return "", json.loads(text[len(METRICS):])
        except ValueError:
            pass
    return text + "\n", None


def metrics_line(values: dict, step: int | None = None) -> str:
    """The line log_metrics prints; the driver turns it into a MetricsEvent."""
    return METRICS + json.dumps({"values": values, "step": step}) + "\n"


class KerasMetrics:
    """Finds Keras epoch-end lines in one source's finished lines; counts epochs per source."""

    def __init__(self) -> None:
        self.epoch_header: dict[str, int] = {}
        self.count: dict[str, int] = {}

    def feed(self, source: str, chunk: str) -> tuple[dict[str, float], int] | None:
        if not chunk.endswith("\n"):
            return None
        line = _ANSI.sub("", chunk.rsplit("\r", 1)[-1]).strip()
        m = _EPOCH.match(line)
        if m:
            self.epoch_header[source] = int(m.group(1))
            return None
        m = _PROGRESS.match(line)
        if not m or m.group(1) != m.group(2) or "ETA" in line:
            return None
        values: dict[str, float] = {}
        for name, value in _METRIC.findall(line):
            try:
                values[name] = float(value)
            except ValueError:
                continue
        if not values:
            return None
        self.count[source] = self.count.get(source, 0) + 1
        step = self.epoch_header.pop(source, None) or self.count[source]
        return values, step
