"""One typed channel over a pipe or socket: JSON lines out, checked messages in, requests and answers.

Every process hop (server <-> kernel, kernel <-> cell worker, kernel -> server for the Ray head)
is one `Channel` with the vocabulary its reader accepts (console/wire/codec.py). What it does
for all of them, written once:

- A line is capped (`line_cap`, 1 MiB on the pipes the reader does not trust): a longer one is a
  ProtocolError at the first byte past the cap, so a writer cannot grow the reader. A message
  whose `text` is long goes out as several messages of at most PIECE_CHARS characters each;
  any other message too long for a line goes as `part` lines that the reader joins, up to
  `message_cap`.
- `request(msg)` sends a message carrying a fresh `request_id` and waits for the answer of that
  id (a timeout is a TimeoutError); an answer nobody waits for (late, forged, repeated) is
  dropped and counted, never kept.
- `messages()` yields what arrives, checked; a line that is not a message of the vocabulary is
  a ProtocolError naming what was wrong: the owner stops the writer with that reason.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
import uuid
from collections.abc import Iterator
import json
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, TypeVar

from console.wire.codec import DecodeError, Max, Message, Vocabulary, decode

log = logging.getLogger(__name__)

LINE_CAP = 1 << 20  # bytes of one line, newline included, on a pipe whose writer is not trusted
TRUSTED_LINE_CAP = 256 << 20  # what a process reads from the side that started it (a cell's source)
MESSAGE_CAP = 16 << 20  # bytes of one message sent as parts (a result page of 10,000 rows)
PIECE_CHARS = 128 * 1024  # a long text goes in pieces this long: 6 bytes a character at worst still fit a line
_PART_CHARS = LINE_CAP // 5  # a part's data re-escaped takes at most 4 bytes a character
_READ = 1 << 16

M = TypeVar("M", bound=Message)


def new_request_id() -> str:
    return uuid.uuid4().hex


class ProtocolError(Exception):
    """The other end broke the protocol; str() is the reason its owner reports."""


@dataclass(frozen=True)
class Part(Message):
    """A piece of one message too long for a line, on any channel: the `data` of consecutive
    parts, joined, is the message's JSON; `last` marks its final piece."""

    type: ClassVar[str] = "part"
    data: Annotated[str, Max(LINE_CAP)]
    last: bool = False


class _Waiter:
    __slots__ = ("event", "kind", "answer")

    def __init__(self, kind: type[Message]) -> None:
        self.event = threading.Event()
        self.kind = kind
        self.answer: Message | None = None


class Channel:
    """read/write: file descriptors (one socket may be both); incoming: what may arrive;
    answers: the incoming types that answer a request (matched by their request_id)."""

    def __init__(self, incoming: Vocabulary, *, read: int | None = None, write: int | None = None,
                 answers: tuple[type[Message], ...] = (), line_cap: int = LINE_CAP,
                 message_cap: int = MESSAGE_CAP, name: str = "") -> None:
        self.incoming = incoming
        self.read_fd, self.write_fd = read, write
        self.answers = answers
        self.line_cap, self.message_cap = line_cap, message_cap
        self.name = name or incoming.name
        self.dropped = 0  # answers nobody waited for
        self._send_lock = threading.Lock()
        self._waiters: dict[str, _Waiter] = {}
        self._waiters_lock = threading.Lock()
        self._closed = False
        self._ended = False  # the reading ended: no answer will come
        self.read_error: OSError | None = None  # why the reading ended, when it was not the writer's EOF

    # ---- sending
    def send(self, msg: Message) -> bool:
        """Write the message (in pieces or parts if long); False when the other end is gone.

        A message that cannot be JSON (a NaN, an object) raises ValueError: the sender's fault."""
        lines = [line + b"\n" for piece in _pieces(msg) for line in self._lines(piece)]
        with self._send_lock:
            if self.write_fd is None or self._closed:
                return False
            try:
                for line in lines:
                    _write_all(self.write_fd, line)
            except (OSError, ValueError):
                return False
        return True

    def _lines(self, msg: Message) -> list[bytes]:
        line = encode(msg)
        if len(line) < self.line_cap:
            return [line]
        text = line.decode()
        step = min(_PART_CHARS, self.line_cap // 5)
        chunks = [text[i:i + step] for i in range(0, len(text), step)]
        return [encode(Part(c, last=n == len(chunks) - 1)) for n, c in enumerate(chunks)]

    # ---- requests and answers
    def request(self, msg: Message, kind: type[M], timeout: float) -> M:
        """Send msg (its request_id a fresh one: new_request_id()) and return the answer of type
        `kind` with that id.

        ConnectionError when it cannot be sent, TimeoutError when no answer comes in time.
        """
        request_id = getattr(msg, "request_id", "")
        if not request_id:
            raise ValueError(f"{msg.type} carries no request_id")
        waiter = _Waiter(kind)
        with self._waiters_lock:
            if self._ended:
                raise ConnectionError(f"the {self.name} channel has ended")
            self._waiters[request_id] = waiter
        try:
            if not self.send(msg):
                raise ConnectionError(f"the {self.name} channel is closed")
            if not waiter.event.wait(timeout):
                raise TimeoutError(f"no answer to {msg.type} within {timeout:.0f} s")
            if not isinstance(waiter.answer, kind):  # woken by the end of the reading
                raise ConnectionError(f"the {self.name} channel ended before the answer to {msg.type}")
            return waiter.answer
        finally:
            with self._waiters_lock:
                self._waiters.pop(request_id, None)

    def answer(self, msg: Message) -> bool:
        """Hand an answer to the request waiting for its id; one nobody waits for is dropped."""
        with self._waiters_lock:
            waiter = self._waiters.get(getattr(msg, "request_id", ""))
            if waiter is not None and waiter.answer is None and isinstance(msg, waiter.kind):
                waiter.answer = msg
                waiter.event.set()
                return True
        self.dropped += 1
        if self.dropped == 1:
            log.warning("%s: dropped an answer nobody waits for (%s); later ones are only counted",
                        self.name, msg.type)
        return False

    # ---- receiving
    def messages(self) -> Iterator[Message]:
        """What arrives until the other end closes; answers go to their requests, not here.

        Raises ProtocolError at the first line that is not a message of the vocabulary.
        """
        if self.read_fd is None:
            return
        try:
            yield from self._decoded()
        finally:  # nothing more will be answered: the askers need not wait out their timeouts
            self.end()

    def end(self) -> None:
        """No answer will come (the reading ended, or the owner stopped the other end): every
        request waiting is woken with a ConnectionError, and later ones fail at once."""
        with self._waiters_lock:
            self._ended = True
            for waiter in self._waiters.values():
                waiter.event.set()

    def _decoded(self) -> Iterator[Message]:
        parts: list[str] = []
        size = 0
        for line in self._read_lines():
            try:
                data = loads(line, self.name)
                if isinstance(data, dict) and data.get("type") == Part.type:
                    part = decode(Part, data)
                    size += len(part.data)
                    if size > self.message_cap:
                        raise ProtocolError(f"a message longer than {self.message_cap} bytes")
                    parts.append(part.data)
                    if not part.last:
                        continue
                    data, parts, size = loads("".join(parts), self.name), [], 0
                elif parts:
                    raise ProtocolError("a message came between the parts of another")
                msg = self.incoming.decode(data)
            except DecodeError as exc:
                raise ProtocolError(str(exc)) from None
            if isinstance(msg, self.answers):
                self.answer(msg)
            else:
                yield msg

    def _read_lines(self) -> Iterator[bytes]:
        assert self.read_fd is not None
        buf = bytearray()
        while True:
            try:
                chunk = os.read(self.read_fd, _READ)
            except OSError as exc:  # ends the stream like an EOF; the owner can say which it was
                self.read_error = exc
                return
            if not chunk:
                return  # a line left unfinished by a writer that died is not a message
            scan = len(buf)
            buf += chunk
            start = 0
            while (nl := buf.find(b"\n", scan)) >= 0:
                yield bytes(buf[start:nl])
                start = scan = nl + 1
            if start:
                del buf[:start]
            if len(buf) >= self.line_cap:
                raise ProtocolError(f"a line longer than {self.line_cap} bytes")

    @property
    def closed(self) -> bool:
        """This end closed its writing (close())."""
        return self._closed

    def close(self) -> None:
        """Stop sending and close the write descriptor (unless it is also the read one: its
        reader closes that when it ends, so a descriptor is never closed under a read)."""
        with self._send_lock:
            if self._closed:
                return
            self._closed = True
            if self.write_fd is not None and self.write_fd != self.read_fd:
                try:
                    os.close(self.write_fd)
                except OSError:
                    pass


def encode(msg: Message) -> bytes:
    """One JSON line (without its newline); non-ASCII text stays UTF-8, not 6-byte escapes."""
    # "replace": a lone surrogate a cell printed becomes "?" rather than a failed print
    return json.dumps(msg.to_wire(), ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                      default=str).encode("utf-8", "replace")


def loads(line: bytes | str, where: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise DecodeError(f"{where}: not a JSON line ({str(exc)[:80]})") from None


def _pieces(msg: Message) -> list[Message]:
    """A message with a long `text` (output) as several, each PIECE_CHARS characters at most."""
    text = getattr(msg, "text", None)
    if not getattr(msg, "in_pieces", False) or not isinstance(text, str) or len(text) <= PIECE_CHARS:
        return [msg]
    return [dataclasses.replace(msg, text=text[i:i + PIECE_CHARS])  # type: ignore[call-arg]
            for i in range(0, len(text), PIECE_CHARS)]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    interrupted: KeyboardInterrupt | None = None
    while view:
        try:
            view = view[os.write(fd, view):]
        except KeyboardInterrupt as exc:  # a cell's interrupt: the line is finished first, never cut
            interrupted = exc
    if interrupted is not None:
        raise interrupted


