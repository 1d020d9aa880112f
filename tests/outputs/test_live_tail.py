"""The live stream of a run past its inline budget: the viewer ends with the stored shape."""
from __future__ import annotations

from console.outputs.keeper import RunKeeper
from console.outputs.live import LiveTail, ViewerLog
from console.wire.browser import OutputEvent
from console.wire.codec import Message


def chunks(first: int, last: int) -> list[OutputEvent]:
    return [OutputEvent(text=f"{seq:099d}\n", source="driver", notebook_id="nb", cell_id="c1", run_id="r1", seq=seq)
            for seq in range(first, last + 1)]


def test_chunks_past_the_head_wait_so_the_viewer_never_keeps_the_middle() -> None:
    keeper, live, viewer = RunKeeper(1000), LiveTail(interval=0.25), ViewerLog()
    sent: list[Message] = []

    def batch(events: list[OutputEvent], now: float, force: bool = False) -> list[Message]:
        keeper.batch(events)
        got = live.take(events, keeper, now, force)
        sent.extend(got)
        return got

    assert [m.seq for m in batch(chunks(1, 4), 0.0)] == [1, 2, 3, 4]  # the head fills: sent at once
    # 800 bytes: within the budget, but past the head. Sent now, chunks 6-8 would become the hidden
    # middle on the next batch while the viewer still showed them (and the marker counted them).
    assert batch(chunks(5, 8), 0.01) == []
    assert batch(chunks(9, 30), 0.3, force=True)
    for m in sent:
        viewer.feed(m.to_wire())
    head = [1, 2, 3, 4, 5]
    tail = [seq for seq, _, _ in keeper.tail]
    assert viewer.seqs == head + [0] + tail
    assert len(viewer.text) + viewer.hidden_bytes == 30 * 100


def test_a_tail_that_slides_by_less_than_it_holds_is_sent_again_after_a_grown_marker() -> None:
    # Under load a batch can be smaller than the tail: the tail then slides past only some of the
    # chunks the viewer was sent. The viewer must still end with the stored tail, not keep those.
    keeper, live, viewer = RunKeeper(1000), LiveTail(interval=0.25), ViewerLog()

    def batch(events: list[OutputEvent], now: float, force: bool = False) -> None:
        keeper.batch(events)
        for m in live.take(events, keeper, now, force):
            viewer.feed(m.to_wire())

    batch(chunks(1, 4), 0.0)
    batch(chunks(5, 30), 0.01)
    batch(chunks(31, 31), 0.3)  # an update: the marker, then the tail 27-31
    batch(chunks(32, 34), 0.6)  # an update: the tail is 30-34, two of the chunks sent left it
    assert viewer.seqs == [1, 2, 3, 4, 5, 0, 30, 31, 32, 33, 34]
    batch(chunks(35, 36), 0.7, force=True)  # the run's end: the tail is 32-36
    assert viewer.seqs == [1, 2, 3, 4, 5, 0, 32, 33, 34, 35, 36]
    assert [seq for seq, _, _ in keeper.tail] == [32, 33, 34, 35, 36]
    assert len(viewer.text) + viewer.hidden_bytes == 36 * 100
