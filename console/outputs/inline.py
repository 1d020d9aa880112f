"""The one inline plan: which chunks of a big output are shown (head and tail) and what is hidden.

Sizes are the UTF-8 bytes of each chunk's text, the same unit as a run's `output_bytes` and the
`OUTPUT_INLINE_BYTES` budget (a line of Chinese or emoji costs what it weighs on the wire, not
its character count). Pure: the stored-run view asks the store for sizes, plans, then fetches
only the chunks shown, so a huge log is never loaded to show its ends.

A run with a log file keeps only its head and tail as rows (keeper.py); the seqs between are a
*gap* the plan never shows, whatever the budget, and always counts as hidden.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class InlinePlan:
    """Seqs shown before and after the hidden middle; `tail` is empty when nothing is hidden.

    gap: (first, last) seq of the hidden middle when it is not simply what lies between the
    head's last and the tail's first seq (a stored gap at the very start, say).
    """

    head: list[int]
    tail: list[int]
    hidden_bytes: int
    gap: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def hidden_seqs(self) -> tuple[int, int] | None:
        """(first, last) seq of the hidden chunks, or None when everything is shown."""
        if self.gap is not None:
            return self.gap
        if not self.tail:
            return None
        return self.head[-1] + 1, self.tail[0] - 1


@dataclass(frozen=True)
class _Item:
    first: int
    last: int
    size: int
    shown: bool  # False for a gap: its chunks are not stored


def plan(sizes: Sequence[tuple[int, int]], inline_bytes: int,
         gaps: Sequence[tuple[int, int, int]] = ()) -> InlinePlan:
    """Split (seq, bytes) chunks, in seq order, into a head and a tail of about half the budget each.

    Whole chunks only; the first and the last chunk are always shown, even when one alone is
    over the budget, so a viewer never sees an output with neither beginning nor end.
    gaps: (first seq, last seq, bytes) of ranges whose chunks are not stored: always hidden.
    """
    items = sorted([_Item(seq, seq, size, True) for seq, size in sizes]
                   + [_Item(first, last, size, False) for first, last, size in gaps], key=lambda i: i.first)
    total = sum(i.size for i in items)
    every = [i.first for i in items]
    if not gaps and total <= inline_bytes:
        return InlinePlan(every, [], 0)
    half = inline_bytes // 2
    head = _fit(items, half)
    rest = items[len(head):]
    tail = list(reversed(_fit(list(reversed(rest)), half)))
    if len(tail) == len(rest):  # head and tail meet: nothing is left to hide
        return InlinePlan(every, [], 0)
    hidden = rest[:len(rest) - len(tail)]
    shown_tail = [i.first for i in tail]
    first, last = hidden[0].first, hidden[-1].last
    return InlinePlan([i.first for i in head], shown_tail, sum(i.size for i in hidden),
                      gap=(first, last) if not head or not tail else None)


def _fit(items: Sequence[_Item], budget: int) -> list[_Item]:
    """The longest run of shown items from the start within budget (the first always), up to a gap."""
    out: list[_Item] = []
    used = 0
    for item in items:
        if not item.shown or (used + item.size > budget and out):
            break
        out.append(item)
        used += item.size
    return out
