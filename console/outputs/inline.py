"""The one inline plan: which chunks of a big output are shown (head and tail) and what is hidden.

Sizes are the UTF-8 bytes of each chunk's text, the same unit as a run's `output_bytes` and the
`OUTPUT_INLINE_BYTES` budget (a line of Chinese or emoji costs what it weighs on the wire, not
its character count). Pure: the stored-run view asks the store for sizes, plans, then fetches
only the chunks shown, so a huge log is never loaded to show its ends.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class InlinePlan:
    """Seqs shown before and after the hidden middle; `tail` is empty when nothing is hidden."""

    head: list[int]
    tail: list[int]
    hidden_bytes: int

    @property
    def hidden_seqs(self) -> tuple[int, int] | None:
        """(first, last) seq of the hidden chunks, or None when everything is shown."""
        if not self.tail:
            return None
        return self.head[-1] + 1, self.tail[0] - 1


def plan(sizes: Sequence[tuple[int, int]], inline_bytes: int) -> InlinePlan:
    """Split (seq, bytes) chunks, in seq order, into a head and a tail of about half the budget each.

    Whole chunks only; the first and the last chunk are always shown, even when one alone is
    over the budget, so a viewer never sees an output with neither beginning nor end.
    """
    total = sum(size for _, size in sizes)
    if total <= inline_bytes:
        return InlinePlan([seq for seq, _ in sizes], [], 0)
    half = inline_bytes // 2
    head: list[int] = []
    used = 0
    for seq, size in sizes:
        if used + size > half and head:
            break
        head.append(seq)
        used += size
    rest = sizes[len(head):]
    tail: list[int] = []
    used = 0
    for seq, size in reversed(rest):
        if used + size > half and tail:
            break
        tail.append(seq)
        used += size
    tail.reverse()
    if len(tail) == len(rest):  # head and tail meet: nothing is left to hide
        return InlinePlan([seq for seq, _ in sizes], [], 0)
    hidden = sum(size for _, size in rest[:len(rest) - len(tail)])
    return InlinePlan(head, tail, hidden)
