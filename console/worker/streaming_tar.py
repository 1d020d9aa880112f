"""A directory as rows {start, offset, value}: an uncompressed tar stream cut into ≤64 KiB chunks.

`start` is the chunk's byte position in the stream and `offset` its length (MLSQL's naming).
Rows must be put back in `start` order to rebuild the directory (save_rows_as_file sorts when
given a list; a generator is taken in the order it comes, as pyjava does).
"""
from __future__ import annotations

import os
import tarfile
import tempfile
from typing import Any, Iterable, Iterator

BLOCK_SIZE = 64 * 1024


class _Sink:
    """A write-only file for tarfile that hands back what was written since the last take()."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def build_rows_from_file(target_dir: str, block_size: int = BLOCK_SIZE) -> Iterator[dict[str, Any]]:
    """Yield the rows of a tar stream of every file under target_dir (names relative to it)."""
    root = os.path.abspath(target_dir)
    sink = _Sink()
    pos = 0

    def rows(data: bytes) -> Iterator[dict[str, Any]]:
        nonlocal pos
        for i in range(0, len(data), block_size):
            piece = data[i:i + block_size]
            yield {"start": pos, "offset": len(piece), "value": piece}
            pos += len(piece)

    tar = tarfile.open(fileobj=sink, mode="w|", format=tarfile.PAX_FORMAT)  # type: ignore[call-overload]
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(base, name)
            info = tar.gettarinfo(path, arcname=os.path.relpath(path, root))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
            yield from rows(sink.take())
    tar.close()
    yield from rows(sink.take())


def save_rows_as_file(data: Iterable[dict[str, Any]], target_dir: str) -> None:
    """Rebuild the directory that build_rows_from_file turned into rows, under target_dir."""
    if isinstance(data, list):
        data = sorted(data, key=lambda r: r["start"])
    os.makedirs(target_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".tar")
    try:
        with os.fdopen(fd, "wb") as fh:
            for row in data:
                fh.write(row["value"])
        with tarfile.open(tmp, mode="r:") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(target_dir, filter="data")  # no absolute paths or ../ escapes
            else:  # pragma: no cover - Python without extraction filters
                tar.extractall(target_dir)
    finally:
        os.unlink(tmp)

