"""The one inline plan: head and tail within a budget of UTF-8 bytes, the middle hidden."""
from __future__ import annotations

from console.outputs.inline import InlinePlan, plan


def test_plan_keeps_head_and_tail_within_budget() -> None:
    sizes = [(i, 100) for i in range(1, 101)]
    assert plan(sizes, 1000) == InlinePlan([1, 2, 3, 4, 5], [96, 97, 98, 99, 100], 9000)
    assert plan(sizes, 1000).hidden_seqs == (6, 95)
    assert plan(sizes[:5], 1000) == InlinePlan([1, 2, 3, 4, 5], [], 0)
    assert plan(sizes[:5], 1000).hidden_seqs is None
    # 100 chunks of 4 bytes in 40: five of each end, 90 hidden.
    assert plan([(i, 4) for i in range(1, 101)], 40) == InlinePlan([1, 2, 3, 4, 5], [96, 97, 98, 99, 100], 360)


def test_first_and_last_chunk_are_shown_even_over_budget() -> None:
    assert plan([(1, 5000), (2, 10), (3, 5000)], 1000) == InlinePlan([1], [3], 10)
    assert plan([(7, 5000)], 1000) == InlinePlan([7], [], 0)
    # Head and tail meet: everything is shown, and no marker says "0 bytes hidden".
    assert plan([(1, 5000), (2, 5000)], 1000) == InlinePlan([1, 2], [], 0)
    assert plan([], 1000) == InlinePlan([], [], 0)


def test_sizes_are_bytes_so_multibyte_text_fills_the_budget_sooner() -> None:
    ascii_line, wide_line = "line\n", "数据数据\n"  # both 5 characters; 5 and 13 bytes
    ascii_sizes = [(i, len(ascii_line.encode())) for i in range(1, 11)]
    wide_sizes = [(i, len(wide_line.encode())) for i in range(1, 11)]
    assert plan(ascii_sizes, 50).tail == []  # 50 bytes: all inline
    cut = plan(wide_sizes, 50)  # 130 bytes: 25 bytes a side, one 13-byte line each
    assert cut == InlinePlan([1], [10], 8 * 13)
