"""The batcher alone: merge per source, split big text, number without gaps, store before publish."""
from __future__ import annotations

from typing import Any

from console.outputs.batcher import NotebookLocks, OutputBatcher, merge, split_text
from console.wire.browser import MetricsEvent, OutputEvent


class Sink:
    def __init__(self, log: list[str]) -> None:
        self.chunks: dict[str, list[Any]] = {}
        self.points: dict[str, list[Any]] = {}
        self.log = log

    def append_output(self, run_id: str, chunks: Any, hidden_bytes: int = 0) -> int:
        self.chunks.setdefault(run_id, []).extend(chunks)
        self.log.append("store")
        return 0

    def append_metrics(self, run_id: str, points: Any) -> None:
        self.points.setdefault(run_id, []).extend(points)

    def last_output_seq(self, run_id: str) -> int:
        return max((c.seq for c in self.chunks.get(run_id, [])), default=0)

    def metrics_for(self, run_id: str, since: int = 0) -> list[Any]:
        return self.points.get(run_id, [])


def out(text: str, source: str = "driver", run: str = "r1") -> OutputEvent:
    return OutputEvent(text=text, source=source, notebook_id="nb", cell_id="c1", run_id=run)


def make() -> tuple[OutputBatcher, Sink, list[Any], list[str]]:
    log: list[str] = []
    sink = Sink(log)
    published: list[Any] = []

    def publish(nb: str, events: list[Any]) -> None:
        log.append("publish")
        published.extend(events)

    return OutputBatcher(sink, publish, NotebookLocks()), sink, published, log


def test_merge_groups_by_source_and_keeps_each_order() -> None:
    items = [out("a1\n", "A"), out("b1\n", "B"), out("a2\n", "A"), out("b2\n", "B")]
    assert merge(items) == [("A", "stdout", "a1\na2\n"), ("B", "stdout", "b1\nb2\n")]


def test_split_prefers_line_ends() -> None:
    text = "".join(f"line {i}\n" for i in range(1000))
    pieces = split_text(text, 100)
    assert "".join(pieces) == text and all(len(p) <= 100 and p.endswith("\n") for p in pieces)
    assert split_text("x" * 250, 100) == ["x" * 100, "x" * 100, "x" * 50]


def test_flush_stores_then_publishes_numbered_chunks() -> None:
    b, sink, published, log = make()
    b.open_run("r1", "nb", "c1")
    for i in range(5):
        b.add(out(f"{i}\n", "A"))
        b.add(out(f"{i}\n", "B"))
    b.add(MetricsEvent(values={"loss": 0.5}, source="A", step=1, run_id="r1", notebook_id="nb", cell_id="c1"))
    b.flush_run("r1")
    b.add(out("more\n", "A"))
    b.flush_run("r1")
    assert log == ["store", "publish", "store", "publish"]
    assert [(e.seq, e.source) for e in published if e.type == "output"] == [(1, "A"), (2, "B"), (3, "A")]
    assert [e.seq for e in published if e.type == "metrics"] == [1]
    assert [c.seq for c in sink.chunks["r1"]] == [1, 2, 3]


def test_late_output_of_a_closed_run_continues_its_numbering() -> None:
    b, sink, published, _ = make()
    b.open_run("r1", "nb", "c1")
    b.add(out("one\n"))
    b.close_run("r1")
    b.add(out("late\n"))  # an actor's last line, after the cell ended
    b.flush_run("r1")
    assert [(e.seq, e.text) for e in published] == [(1, "one\n"), (2, "late\n")]
