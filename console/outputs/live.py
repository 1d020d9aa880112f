"""What the viewers of a run are sent live once its output is past the inline budget.

While the head is filling, every chunk goes out as it is numbered. Past it, sending every chunk
made Socket.IO the bottleneck (50 MB was 12,500 events to each viewer, which then kept only the
head and tail anyway). So once the head is full, at most one update per `interval` goes out per
run, the first one interval after the head filled: the head chunks not sent yet, then, when
the tail has moved since the last marker, one `output_hidden` marker for the whole middle
followed by the whole current tail, else the chunks of the current tail not sent yet.

The viewer's rule (frontend/src/logmodel.js): a marker for a run whose log already has one
grows that marker (its bytes are the run's whole hidden size) and replaces everything after it,
the previous tail, which is now part of the middle. That is the stored-run view's shape, and a
socket join replays the same shape from the store (seqs the viewer already has are skipped by
its seq tracker), so a viewer that reconnects gets exactly what it missed.

The tail can slide past only some of the chunks the viewers were sent (a batch smaller than the
tail, as under load, or the run's last one): the update then grows the marker and sends the
whole current tail again, chunks the viewers hold included. So a marker that grows the page's
marker is taken even when its last_seq is below the page's last seq, and it sets the page's seq
tracker back to its last_seq so that the tail after it is taken again (seqtracker.js
`acceptMarker`). Without that the viewers kept the chunks that had left the tail, and a page
watching live showed more lines than the same page after a reload.
"""
from __future__ import annotations

from console.outputs.keeper import RunKeeper
from console.outputs.view import log_url
from console.wire.browser import OutputEvent, OutputHiddenEvent
from console.wire.codec import Message


class LiveTail:
    """The live side of one run: what was sent, and the numbered chunks still waiting."""

    def __init__(self, interval: float = 0.25) -> None:
        self.interval = interval
        self.sent = 0  # the highest seq the viewers were sent (a chunk or a marker's last)
        self.marker_last = 0  # last_seq of the last marker sent; 0 before the first
        self.pending: list[OutputEvent] = []
        self.shown: list[OutputEvent] = []  # the tail chunks the viewers hold after the marker
        self.last_update = float("-inf")

    def take(self, events: list[OutputEvent], keeper: RunKeeper | None, now: float, force: bool) -> list[Message]:
        """The messages to publish now for this batch (stored already); [] while throttled."""
        if keeper is None or (keeper.head_open and not self.pending):
            if events:
                self.sent = max(self.sent, events[-1].seq)
            return list(events)
        if self.last_update == float("-inf"):
            # The head just closed: what follows may fit the budget or become the hidden middle.
            # Chunks sent now that later fall in the middle would stay on the viewers' pages
            # beside a marker that counts them too, so the first update after the head waits
            # one interval (the run's end sends at once).
            self.last_update = now
        tail_first = keeper.tail[0][0] if keeper.tail else keeper.head_last + 1
        # Only head chunks and the current tail can still be shown; the rest is the middle.
        self.pending = [e for e in [*self.pending, *events] if e.seq <= keeper.head_last or e.seq >= tail_first]
        if not force and now - self.last_update < self.interval:
            return []
        self.last_update = now
        head = [e for e in self.pending if e.seq <= keeper.head_last]
        new_tail = [e for e in self.pending if e.seq > keeper.head_last]
        tail = [e for e in self.shown if e.seq >= tail_first] + new_tail
        out: list[Message] = list(head)
        held = tail or head
        if tail_first - 1 > max(self.marker_last, keeper.head_last) and held:
            # The middle grew (some or all of the tail the viewers hold left it): the marker
            # grows and the whole current tail follows it again, chunks they hold included.
            sample = held[-1]
            out.append(OutputHiddenEvent(sample.notebook_id, sample.cell_id, sample.run_id, keeper.head_last + 1,
                                         tail_first - 1, keeper.hidden_total, log_url(sample.run_id)))
            self.marker_last = tail_first - 1
            self.sent = max(self.sent, self.marker_last)
            out += tail
        else:
            out += new_tail
        self.shown = tail
        if self.pending:
            self.sent = max(self.sent, self.pending[-1].seq)
        self.pending = []
        return out

    @property
    def waiting(self) -> bool:
        return bool(self.pending)


class ViewerLog:
    """A viewer's log of one run, by the page's rules (seqtracker.js, logmodel.js): what the
    tests and bench/big_log.py compare with the replay. Events are wire dicts."""

    def __init__(self) -> None:
        self.last = 0
        self.marker_last = 0  # last_seq of the marker held
        self.items: list[tuple[int, str]] = []  # (seq, text); seq 0 and text "" is the marker
        self.hidden_bytes = 0

    def feed(self, event: dict[str, object]) -> None:
        if event["type"] == "output":
            seq = int(event["seq"])  # type: ignore[call-overload]
            if seq > self.last:
                self.last = seq
                self.items.append((seq, str(event["text"])))
        elif event["type"] == "output_hidden":
            # seqtracker.js acceptMarker: the first marker when past every chunk held; a later one
            # when it grows the marker held, even below the last chunk held: the tracker goes
            # back to it, and the tail that follows is taken again.
            last = int(event["last_seq"])  # type: ignore[call-overload]
            marker = [i for i, (seq, _) in enumerate(self.items) if seq == 0]
            if last <= (self.marker_last if marker else self.last):
                return
            self.last = self.marker_last = last
            if marker:
                del self.items[marker[0] + 1:]
                self.hidden_bytes = int(event["hidden_bytes"])  # type: ignore[call-overload]
            else:
                self.items.append((0, ""))
                self.hidden_bytes += int(event["hidden_bytes"])  # type: ignore[call-overload]

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.items)

    @property
    def seqs(self) -> list[int]:
        return [seq for seq, _ in self.items]
