"""Reading what pages send for co-editing without trusting it: Yjs updates and awareness updates.

Two binary formats of the Yjs world, read here in plain Python so the server can check them
before pycrdt holds them (console/server/live/coedit.py):

- a Yjs update (v1): `update_weight` counts its structs, because what a document costs the
  server is set by how many items it holds, not by its encoded bytes: 2.8 MB of one-character
  inserts grew the server by 66 MB, the same bytes as one pasted text by 3;
- a y-protocols awareness update: `read_awareness` / `write_awareness`, so the server can keep
  only the sender's own client id and stamp each state with the sender's account.

Both use lib0's encoding (varuint, varstring, `any`). Malformed input is a ValueError.
"""
from __future__ import annotations

import json
from typing import Any

ITEM_BYTES = 200  # what one item of a Yjs document costs the server (measured: 190-250 bytes in Yrs)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ValueError("the update ends early")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def uint(self) -> int:
        value, shift = 0, 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7
            if shift > 70:
                raise ValueError("a number in the update is too long")

    def sint(self) -> int:
        b = self.byte()
        value, negative, shift = b & 0x3F, bool(b & 0x40), 6
        while b & 0x80:
            b = self.byte()
            value |= (b & 0x7F) << shift
            shift += 7
            if shift > 70:
                raise ValueError("a number in the update is too long")
        return -value if negative else value

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("the update ends early")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def string(self) -> str:
        return self.take(self.uint()).decode("utf-8")

    def any(self, depth: int = 0) -> None:
        if depth > 32:
            raise ValueError("a value in the update is nested too deep")
        kind = self.byte()
        if kind in (127, 126, 121, 120):  # undefined, null, false, true
            return
        if kind == 125:
            self.sint()
        elif kind == 124:
            self.take(4)
        elif kind in (123, 122):
            self.take(8)
        elif kind == 119:
            self.string()
        elif kind == 118:
            for _ in range(self.uint()):
                self.string()
                self.any(depth + 1)
        elif kind == 117:
            for _ in range(self.uint()):
                self.any(depth + 1)
        elif kind == 116:
            self.take(self.uint())
        else:
            raise ValueError(f"unknown value type {kind} in the update")

    def done(self) -> bool:
        return self.pos >= len(self.data)


def update_items(update: bytes, stop_after: int | None = None) -> int:
    """How many structs (items, deleted runs, gaps) a Yjs v1 update holds; ValueError when malformed.

    stop_after: count no further than this (reading 3 MB of tiny items takes 1.7 s here).
    """
    r = _Reader(update)
    items = 0
    for _ in range(r.uint()):  # clients
        count = r.uint()
        r.uint()  # client
        r.uint()  # first clock
        for _ in range(count):
            items += 1
            if stop_after is not None and items > stop_after:
                return items
            info = r.byte()
            ref = info & 0x1F
            if ref in (0, 10):  # GC, skip: a length
                r.uint()
                continue
            if info & 0x80:  # left origin
                r.uint(), r.uint()
            if info & 0x40:  # right origin
                r.uint(), r.uint()
            if not info & 0xC0:  # the parent is written out
                if r.uint() == 1:
                    r.string()
                else:
                    r.uint(), r.uint()
                if info & 0x20:
                    r.string()
            _content(r, ref)
    for _ in range(r.uint()):  # the delete set: client, then (clock, length) ranges
        r.uint()
        for _ in range(r.uint()):
            r.uint(), r.uint()
            items += 1
    return items


def _content(r: _Reader, ref: int) -> None:
    if ref == 1:  # deleted
        r.uint()
    elif ref == 2:  # JSON
        for _ in range(r.uint()):
            r.string()
    elif ref == 3:  # binary
        r.take(r.uint())
    elif ref in (4, 5):  # string, embed
        r.string()
    elif ref == 6:  # format: key, value
        r.string(), r.string()
    elif ref == 7:  # a type; XmlElement and XmlHook carry a name
        if r.uint() in (3, 5):
            r.string()
    elif ref == 8:  # any
        for _ in range(r.uint()):
            r.any()
    elif ref == 9:  # a sub-document: guid, options
        r.string()
        r.any()
    else:
        raise ValueError(f"unknown content type {ref} in the update")


def update_weight(update: bytes, limit: int | None = None) -> int:
    """What holding `update` costs a document, in bytes: its size plus ITEM_BYTES per item; once
    past `limit`, some weight past it (the rest is not read)."""
    stop = None if limit is None else max(0, (limit - len(update)) // ITEM_BYTES)
    return len(update) + ITEM_BYTES * update_items(update, stop)


# ---------------------------------------------------------------- awareness

Awareness = list[tuple[int, int, dict[str, Any] | None]]  # (client id, clock, state or None: gone)


def read_awareness(update: bytes) -> Awareness:
    """The entries of a y-protocols awareness update; ValueError when malformed."""
    r = _Reader(update)
    out: Awareness = []
    for _ in range(r.uint()):
        client, clock, text = r.uint(), r.uint(), r.string()
        try:
            state = json.loads(text) if text else None
        except RecursionError:  # json.loads recurses once per level
            raise ValueError("an awareness state is nested too deep") from None
        if state is not None and not isinstance(state, dict):
            raise ValueError("an awareness state is a JSON object or null")
        out.append((client, clock, state))
    if not r.done():
        raise ValueError("bytes after the awareness update's last entry")
    return out


def _uint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def write_awareness(entries: Awareness) -> bytes:
    out = bytearray(_uint(len(entries)))
    for client, clock, state in entries:
        text = json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode()
        out += _uint(client) + _uint(clock) + _uint(len(text)) + text
    return bytes(out)

