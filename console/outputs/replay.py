"""What a viewer is sent about stored runs: status, output after a seq (head + marker + tail), metrics, result.

Used on join (the socket layer, under the notebook lock) and by the REST reads. Output beyond the
inline budget keeps its head and tail; the middle becomes one OutputHiddenEvent with the size
and the download link, so nobody is silently cut off.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from console.messages import CellStatusEvent, ErrorEvent, Message, MetricsEvent, OutputEvent, OutputHiddenEvent, ResultEvent, from_wire


def log_url(run_id: str) -> str:
    return f"/api/runs/{run_id}/log"


def plan(sizes: list[tuple[int, int]], inline: int) -> tuple[list[int], list[int], int]:
    """Split (seq, size) chunks into head seqs, tail seqs and the hidden size between them."""
    total = sum(size for _, size in sizes)
    if total <= inline:
        return [seq for seq, _ in sizes], [], 0
    half = inline // 2
    head: list[int] = []
    used = 0
    for seq, size in sizes:
        if used + size > half and head:
            break
        head.append(seq)
        used += size
    tail: list[int] = []
    used = 0
    for seq, size in reversed(sizes[len(head):]):
        if used + size > half and tail:
            break
        tail.append(seq)
        used += size
    tail.reverse()
    hidden = total - sum(size for seq, size in sizes if seq in set(head) | set(tail))
    return head, tail, hidden


def output_events(store: Any, notebook_id: str, cell_id: str, run_id: str, since: int, inline: int) -> list[Message]:
    from console.store import runs_extra

    sizes = runs_extra.output_sizes(store, run_id, since)
    if not sizes:
        return []
    head, tail, hidden = plan(sizes, inline)

    def chunks(seqs: list[int]) -> list[Message]:
        if not seqs:
            return []
        return [OutputEvent(c.text, c.source, c.stream, notebook_id, cell_id, run_id, c.seq)
                for c in runs_extra.outputs_between(store, run_id, seqs[0], seqs[-1])]

    events = chunks(head)
    if tail:
        events.append(OutputHiddenEvent(notebook_id, cell_id, run_id, head[-1] + 1, tail[0] - 1, hidden,
                                        log_url(run_id)))
        events += chunks(tail)
    return events


def run_events(store: Any, run: Any, since: int = 0, metrics_since: int = 0, inline: int = 256 * 1024) -> list[Message]:
    """Status, output, metrics and the result or error of one stored run (a RunRecord)."""
    ids = (run.notebook_id, run.cell_id, run.id)
    elapsed = None
    if run.finished_at is not None:
        elapsed = int((run.finished_at - run.started_at).total_seconds() * 1000)
    events: list[Message] = [CellStatusEvent(*ids, run.status, elapsed)]
    events += output_events(store, *ids, since, inline)
    for m in store.metrics_for(run.id, metrics_since):
        events.append(MetricsEvent(m.values, m.source, m.step, *ids, m.seq, m.ts))
    for stored in (run.result, run.error):
        if stored:
            msg = from_wire(dict(stored))
            if isinstance(msg, (ResultEvent, ErrorEvent)):
                events.append(msg)
    return events


def notebook_events(store: Any, notebook_id: str, since: dict[str, int], metrics_since: dict[str, int],
                    inline: int) -> list[Message]:
    """The latest run of every cell, oldest first, each after what the viewer already has."""
    runs = sorted(store.latest_runs(notebook_id, with_outputs=False).values(), key=lambda r: r.started_at)
    events: list[Message] = []
    for run in runs:
        events += run_events(store, run, int(since.get(run.id, 0)), int(metrics_since.get(run.id, 0)), inline)
    return events


def log_lines(chunks: Iterable[Any]) -> Iterator[str]:
    """The full log as text: each line of an actor or the kernel tagged `(source) `, like Ray does."""
    at_line_start = True
    last_key: tuple[str, str] | None = None
    for c in chunks:
        key = (c.source, c.stream)
        text = c.text
        if key != last_key and not at_line_start:
            yield "\n"
            at_line_start = True
        last_key = key
        tag = "" if c.source == "driver" else f"({c.source}) "
        if text.startswith("\r"):
            # A redraw of the unfinished line: kept as a carriage return, as a terminal shows it.
            text = text[1:]
            if not at_line_start:
                yield "\r"
                at_line_start = True
        for line in text.splitlines(keepends=True):
            yield (tag if at_line_start else "") + line
            at_line_start = line.endswith("\n")
