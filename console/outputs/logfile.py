"""A run's full log as a gzip file in the server's private folder, written as the output streams.

    <data_dir>/server/logs/<notebook id>/<run id>.log.gz     (runs.log_file holds the part after <data_dir>/)

The file holds the text the log download gives (`LogRenderer`: wire chunks, each line of an
actor tagged `(source) `, redraws as carriage returns), one gzip *member* per batch of the
batcher. A gzip file may be a series of members (`zcat` and Python's gzip read them as one
text), so each batch is complete on disk the moment it is written, and a file cut short by a
kill reads fine up to its last whole member. Each member's header comment names the last seq of
its batch (`seq=123`); after a crash `repair` cuts members the database never recorded, so the
file and the database's tail end at the same chunk.

The server writes it, under <data_dir>/server/, which sandboxed kernels cannot see.
"""
from __future__ import annotations

import os
import shutil
import struct
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from console.config import PRIVATE_DIR_NAME

LOGS_DIR = "logs"
# zlib level 1: ~5x smaller for typical logs and several times faster than the default 6; a
# 50 MB log costs ~0.2 s of one core to compress.
LEVEL = 1
_READ = 1 << 16
_FTEXT, _FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 1, 2, 4, 8, 16


class Chunk(Protocol):
    """A numbered output chunk: an OutputEvent or a stored OutputRecord."""

    @property
    def text(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def stream(self) -> str: ...


def relative_path(notebook_id: str, run_id: str) -> str:
    """runs.log_file for a run: relative to the data folder, in the server's private folder."""
    return f"{PRIVATE_DIR_NAME}/{LOGS_DIR}/{notebook_id}/{run_id}.log.gz"


def remove_notebook_logs(data_dir: Path, notebook_id: str) -> None:
    """Delete a deleted notebook's log files (the store's rows went with the notebook)."""
    if not notebook_id or "/" in notebook_id or notebook_id in (".", ".."):
        return  # ids come from the store; never let one name a folder outside logs/
    shutil.rmtree(Path(data_dir) / PRIVATE_DIR_NAME / LOGS_DIR / notebook_id, ignore_errors=True)


def image_line(text: str) -> str:
    """What an image chunk (one base64 PNG) is in a text log: a line saying what it was."""
    return f"[image/png, {len(text)} bytes of base64]\n"


class LogRenderer:
    """Wire chunks -> the log's text, statefully (a batch at a time, or a whole stored run).

    Lines of an actor or the kernel are tagged `(source) `, as Ray tags them; a chunk that begins
    with `\\r` (a redraw of the unfinished line, see collapse.py) keeps a carriage return, as a
    terminal shows it; a line left unfinished by one source ends when another source speaks.
    """

    def __init__(self) -> None:
        self.at_line_start = True
        self.last_key: tuple[str, str] | None = None

    def feed(self, c: Chunk) -> str:
        out: list[str] = []
        key = (c.source, c.stream)
        if key != self.last_key and not self.at_line_start:
            out.append("\n")
            self.at_line_start = True
        self.last_key = key
        tag = "" if c.source == "driver" else f"({c.source}) "
        text = c.text
        if c.stream == "image":
            text = image_line(text)
        elif text.startswith("\r"):
            text = text[1:]
            if not self.at_line_start:
                out.append("\r")
                self.at_line_start = True
        if not tag:
            # The common case, without a split into lines: a 50 MB log is joined, not looped over.
            if text:
                out.append(text)
                self.at_line_start = text.endswith("\n")
            return "".join(out)
        for line in text.splitlines(keepends=True):
            out.append((tag if self.at_line_start else "") + line)
            self.at_line_start = line.endswith("\n")
        return "".join(out)

    def render(self, chunks: Iterable[Chunk]) -> str:
        return "".join(self.feed(c) for c in chunks)


def member(data: bytes, seq: int) -> bytes:
    """One complete gzip member holding `data`, its header comment naming the batch's last seq."""
    header = b"\x1f\x8b\x08" + bytes([_FCOMMENT]) + struct.pack("<I", int(time.time())) + b"\x00\xff"
    deflate = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)
    body = deflate.compress(data) + deflate.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return header + f"seq={seq}".encode() + b"\x00" + body + trailer


class LogWriter:
    """Appends one member per batch to a run's file; each write is on disk (in the OS) when it returns."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Appending: output that comes after a run was closed (a late line) adds members.
        self._fh: BinaryIO = open(path, "ab")  # held open for the run's life
        self.path = path
        self.renderer = LogRenderer()

    def write(self, chunks: Iterable[Chunk], last_seq: int) -> None:
        text = self.renderer.render(chunks)
        if text:
            self._fh.write(member(text.encode("utf-8"), last_seq))
            self._fh.flush()

    def close(self) -> None:
        self._fh.close()


@dataclass(frozen=True)
class _End:
    """A whole member ended: its batch's last seq (0 if unnamed) and the file offset after it."""

    seq: int
    offset: int


class _Reader:
    """The file as bytes with an offset, read a block at a time."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh, self.buf, self.offset = fh, b"", 0

    def fill(self, n: int) -> bool:
        while len(self.buf) < n:
            block = self.fh.read(_READ)
            if not block:
                return False
            self.buf += block
        return True

    def take(self, n: int) -> bytes:
        out, self.buf = self.buf[:n], self.buf[n:]
        self.offset += len(out)
        return out

    def take_to_nul(self) -> bytes | None:
        while b"\x00" not in self.buf:
            if not self.fill(len(self.buf) + 1):
                return None
        end = self.buf.index(b"\x00")
        text = self.take(end + 1)
        return text[:-1]


def _scan(fh: BinaryIO) -> Iterator[bytes | _End]:
    """The decompressed data of each member, then its _End; stops quietly where the file is cut short."""
    r = _Reader(fh)
    while r.fill(10):
        head = r.take(10)
        if head[:3] != b"\x1f\x8b\x08":
            raise ValueError(f"not a gzip member at byte {r.offset - 10} of {getattr(fh, 'name', 'the log')}")
        flags, seq = head[3], 0
        if flags & _FEXTRA:
            if not r.fill(2):
                return
            (xlen,) = struct.unpack("<H", r.take(2))
            if not r.fill(xlen):
                return
            r.take(xlen)
        for flag in (_FNAME, _FCOMMENT):
            if flags & flag:
                field = r.take_to_nul()
                if field is None:
                    return
                if flag == _FCOMMENT and field.startswith(b"seq="):
                    seq = int(field[4:] or 0)
        if flags & _FHCRC:
            if not r.fill(2):
                return
            r.take(2)
        inflate = zlib.decompressobj(-15)
        crc, size = 0, 0
        while not inflate.eof:
            if not r.buf and not r.fill(1):
                return  # cut inside the data: what came out of it was yielded, the member is not whole
            data = inflate.decompress(r.take(len(r.buf)))
            # What follows the member's data (its trailer, the next member) goes back to the reader.
            r.buf, r.offset = inflate.unused_data, r.offset - len(inflate.unused_data)
            if data:
                crc, size = zlib.crc32(data, crc), size + len(data)
                yield data
        if not r.fill(8):
            return
        want_crc, want_size = struct.unpack("<II", r.take(8))
        if (want_crc, want_size) != (crc, size & 0xFFFFFFFF):
            raise ValueError(f"a damaged member ends at byte {r.offset} of {getattr(fh, 'name', 'the log')}")
        yield _End(seq, r.offset)


def read_log(path: Path) -> Iterator[bytes]:
    """The log's text as UTF-8 blocks, up to the last byte that can be read (a file being written,
    or one a kill cut short, reads up to where it ends)."""
    with open(path, "rb") as fh:
        for item in _scan(fh):
            if isinstance(item, bytes):
                yield item


def repair(path: Path, last_seq: int) -> int:
    """Cut the file after the last whole member whose batch the database has (seq <= last_seq).

    The batcher writes a batch to the file before it stores it, so a server killed in between
    leaves one member (or part of one) more than the database knows; it goes, and the file and
    the stored tail end at the same chunk. Returns the bytes cut.
    """
    keep = 0
    with open(path, "rb") as fh:
        for item in _scan(fh):
            if isinstance(item, _End):
                if item.seq > last_seq:
                    break
                keep = item.offset
    size = path.stat().st_size
    if keep < size:
        os.truncate(path, keep)
    return size - keep
