"""A run's full log as a gzip file in the server's private folder, written as the output streams.

    <data_dir>/server/logs/<notebook id>/<run id>.log.gz     (runs.log_file holds the part after <data_dir>/)

The file holds the text the log download gives (`LogRenderer`: wire chunks, each line of an
actor tagged `(source) `, redraws as carriage returns), one gzip *member* per batch of the
batcher. A gzip file may be a series of members (`zcat` and Python's gzip read them as one
text), so each batch is complete on disk the moment it is written, and a file cut short by a
kill reads fine up to its last whole member. Each member's header comment names the last seq of
its batch (`seq=123`); after a crash `repair` cuts members the database never recorded, so the
file and the database's tail end at the same chunk.

The server writes it, under <data_dir>/server/, which sandboxed kernels cannot see. Every open,
removal and repair goes through `LogFolder`: the folders below the data dir are opened one at a
time relative to their parent's descriptor with O_NOFOLLOW, and the names are ids of the
store's alphabet, so no id and no link can make the server write, read or delete anywhere else.
"""
from __future__ import annotations

import errno
import os
import re
import struct
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol, cast

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


SUFFIX = ".log.gz"
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # the store's ids (console/store/db.py new_id, cell ids)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _id(value: str, what: str) -> str:
    if not isinstance(value, str) or not _ID.match(value):
        raise ValueError(f"a log file's {what} must be an id of letters, digits, '_' or '-', not {str(value)[:40]!r}")
    return value


def relative_path(notebook_id: str, run_id: str) -> str:
    """runs.log_file for a run: relative to the data folder, in the server's private folder."""
    return f"{PRIVATE_DIR_NAME}/{LOGS_DIR}/{_id(notebook_id, 'notebook')}/{_id(run_id, 'run')}{SUFFIX}"


def _ids_of(rel: str) -> tuple[str, str]:
    """(notebook id, run id) of a runs.log_file value; ValueError for anything else."""
    parts = rel.split("/")
    if len(parts) != 4 or parts[:2] != [PRIVATE_DIR_NAME, LOGS_DIR] or not parts[3].endswith(SUFFIX):
        raise ValueError(f"not a log file's place: {rel[:120]!r}")
    return _id(parts[2], "notebook"), _id(parts[3][:-len(SUFFIX)], "run")


class LogFolder:
    """<data_dir>/server/logs/<notebook>/<run>.log.gz, reached through directory descriptors.

    Each folder below the data dir is opened relative to its parent with O_NOFOLLOW and each
    file with O_NOFOLLOW too, so a link anywhere on the way is refused (ELOOP), never followed.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)

    def _folder(self, names: tuple[str, ...], create: bool) -> int:
        """A descriptor of data_dir/names[0]/names[1]/..., each opened in its parent (the caller closes it)."""
        fd = os.open(self.data_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the operator's own setting
        try:
            for name in names:
                if create:
                    try:
                        os.mkdir(name, 0o700, dir_fd=fd)
                    except FileExistsError:
                        pass
                child = os.open(name, _DIR, dir_fd=fd)
                os.close(fd)
                fd = child
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _notebook_dir(self, notebook_id: str, create: bool) -> int:
        return self._folder((PRIVATE_DIR_NAME, LOGS_DIR, _id(notebook_id, "notebook")), create)

    def _open(self, rel: str, flags: int, create: bool = False) -> BinaryIO:
        notebook_id, run_id = _ids_of(rel)
        folder = self._notebook_dir(notebook_id, create)
        try:
            fd = os.open(run_id + SUFFIX, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
        finally:
            os.close(folder)
        mode = "ab" if flags & os.O_APPEND else ("r+b" if flags & os.O_RDWR else "rb")
        return cast(BinaryIO, os.fdopen(fd, mode))

    def writer(self, notebook_id: str, run_id: str) -> "LogWriter":
        """The run's file, opened to append (created with its folders)."""
        rel = relative_path(notebook_id, run_id)
        return LogWriter(self._open(rel, os.O_WRONLY | os.O_APPEND | os.O_CREAT, create=True), rel)

    def open(self, rel: str) -> BinaryIO | None:
        """The file runs.log_file names, to read; None if it is missing (ValueError: not a log's place)."""
        try:
            return self._open(rel, os.O_RDONLY)
        except FileNotFoundError:
            return None

    def repair(self, rel: str, last_seq: int) -> int:
        """`repair` on the file runs.log_file names; 0 when it is missing."""
        try:
            fh = self._open(rel, os.O_RDWR)
        except FileNotFoundError:
            return 0
        with fh:
            return repair(fh, last_seq)

    def remove(self, rel: str) -> bool:
        """Delete the file runs.log_file names (unlink never follows a link). True if one went."""
        notebook_id, run_id = _ids_of(rel)
        try:
            folder = self._notebook_dir(notebook_id, create=False)
        except FileNotFoundError:
            return False
        try:
            os.unlink(run_id + SUFFIX, dir_fd=folder)
            return True
        except FileNotFoundError:
            return False
        finally:
            os.close(folder)

    def remove_notebook(self, notebook_id: str) -> None:
        """Delete a deleted notebook's log folder: its files, then the folder (a link in its
        place: only the link)."""
        try:
            logs = self._folder((PRIVATE_DIR_NAME, LOGS_DIR), create=False)
        except FileNotFoundError:
            return
        try:
            try:
                folder = os.open(_id(notebook_id, "notebook"), _DIR, dir_fd=logs)
            except FileNotFoundError:
                return
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    os.unlink(notebook_id, dir_fd=logs)
                    return
                raise
            try:
                for name in os.listdir(folder):
                    try:
                        os.unlink(name, dir_fd=folder)
                    except IsADirectoryError:  # nothing of ours; left alone
                        continue
            finally:
                os.close(folder)
            try:
                os.rmdir(notebook_id, dir_fd=logs)
            except OSError:
                pass  # not empty: what is not ours stays
        finally:
            os.close(logs)


def remove_notebook_logs(data_dir: Path, notebook_id: str) -> None:
    """Delete a deleted notebook's log files (the store's rows went with the notebook)."""
    try:
        LogFolder(data_dir).remove_notebook(notebook_id)
    except (OSError, ValueError):
        pass  # nothing of ours there (or an id the store never makes)


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
    """Appends one member per batch to a run's file (LogFolder.writer opens it, to append: a late
    line after the run was closed adds members); each write is in the OS when it returns."""

    def __init__(self, fh: BinaryIO, rel: str = "") -> None:
        self._fh = fh  # held open for the run's life
        self.rel = rel
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


def read_log(fh: BinaryIO) -> Iterator[bytes]:
    """The log's text as UTF-8 blocks, up to the last byte that can be read (a file being written,
    or one a kill cut short, reads up to where it ends); closes the file at the end."""
    with fh:
        for item in _scan(fh):
            if isinstance(item, bytes):
                yield item


def repair(fh: BinaryIO, last_seq: int) -> int:
    """Cut the file after the last whole member whose batch the database has (seq <= last_seq).

    The batcher writes a batch to the file before it stores it, so a server killed in between
    leaves one member (or part of one) more than the database knows; it goes, and the file and
    the stored tail end at the same chunk. Returns the bytes cut.
    """
    keep = 0
    fh.seek(0)
    for item in _scan(fh):
        if isinstance(item, _End):
            if item.seq > last_seq:
                break
            keep = item.offset
    size = os.fstat(fh.fileno()).st_size
    if keep < size:
        os.ftruncate(fh.fileno(), keep)
    return size - keep
