"""Which chunks of a streaming run the database keeps: the head and tail the inline plan shows.

The full log goes to the run's file (logfile.py); rows are kept only for what a viewer is shown.
`RunKeeper` applies inline.plan's rules as the chunks arrive, so the stored rows are exactly
what the plan would show of the whole output:

- while the output fits the budget, every chunk is kept;
- the head is the longest prefix within half the budget (the first chunk always), fixed once a
  chunk does not fit;
- once the output is over the budget, the tail is the longest suffix within the other half (the
  last chunk always); chunks that leave it are dropped from the database (or never written).

So the stored rows are the head, a gap of seqs (the hidden middle, whose bytes the run counts
in hidden_bytes) and the tail. Whole chunks only: an image chunk is kept or dropped whole.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from console.wire.browser import OutputEvent


def size_of(chunk: OutputEvent) -> int:
    """A chunk's size in the plan's unit: UTF-8 bytes of its text."""
    return len(chunk.text.encode("utf-8"))


@dataclass(frozen=True)
class Keep:
    """What to do in the database for one batch."""

    store: list[OutputEvent]  # chunks to insert
    skipped_bytes: int  # bytes of this batch's chunks not inserted (already in the middle)
    drop: tuple[int, int] | None  # (first, last) seq of stored rows that left the tail
    hidden_bytes: int  # bytes newly hidden: skipped ones and dropped ones


class RunKeeper:
    """The head/tail bookkeeping of one run in flight (only what the tail holds is in memory)."""

    def __init__(self, inline_bytes: int) -> None:
        self.budget = inline_bytes
        self.half = inline_bytes // 2
        self.total = 0
        self.head_open = True
        self.head_bytes = 0
        self.head_count = 0
        self.head_last = 0  # seq of the head's last chunk
        self.hidden_total = 0  # bytes hidden so far: what the viewers' marker says
        # (seq, bytes, stored already) of the chunks in the tail, oldest first.
        self.tail: deque[tuple[int, int, bool]] = deque()
        self.tail_bytes = 0

    def batch(self, chunks: Sequence[OutputEvent]) -> Keep:
        sizes = {c.seq: size_of(c) for c in chunks}
        head: list[OutputEvent] = []
        for c in chunks:
            size = sizes[c.seq]
            self.total += size
            if self.head_open and (self.head_bytes + size <= self.half or not self.head_count):
                head.append(c)
                self.head_bytes += size
                self.head_count += 1
                self.head_last = c.seq
                continue
            self.head_open = False
            self.tail.append((c.seq, size, False))
            self.tail_bytes += size
        dropped: list[int] = []
        skipped = hidden = 0
        if self.total > self.budget:
            while self.tail_bytes > self.half and len(self.tail) > 1:
                seq, size, stored = self.tail.popleft()
                self.tail_bytes -= size
                hidden += size
                if stored:
                    dropped.append(seq)
                else:
                    skipped += size
        self.hidden_total += hidden
        new_tail = {seq for seq, _, stored in self.tail if not stored}
        self.tail = deque((seq, size, True) for seq, size, _ in self.tail)
        keep = head + [c for c in chunks if c.seq in new_tail]
        drop = (dropped[0], dropped[-1]) if dropped else None
        return Keep(keep, skipped, drop, hidden)
