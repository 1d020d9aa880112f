"""The stored-run view: what a viewer is shown of a stored run, built in this one place.

A run is shown as its status, its output (all of it, or the head and tail of the inline plan
with the hidden middle between), its metrics, and its result (the first RESULT_ROWS rows) or
error. The socket replay, the run API (which the notebook page loads) and the published page
all read stored runs through `view_run` / `latest_views`, so they show the same thing.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from console.ids import NotebookId
from console.outputs.inline import plan
from console.protocols import RunStore
from console.store.records import MetricRecord, OutputRecord, RunRecord
from console.wire.browser import (CellState, CellStatusEvent, ErrorEvent, MetricsEvent, OutputEvent, OutputHiddenEvent,
                                  ResultEvent)
from console.wire.codec import Message

_Stored = TypeVar("_Stored", ResultEvent, ErrorEvent)


def log_url(run_id: str) -> str:
    """Where the full output of a run is downloaded (what the hidden marker links to)."""
    return f"/api/runs/{run_id}/log"


@dataclass(frozen=True)
class RunView:
    """One stored run as a viewer sees it. `hidden` is None when all output is inline (in `head`)."""

    run: RunRecord
    head: list[OutputRecord]
    hidden: OutputHiddenEvent | None
    tail: list[OutputRecord]
    metrics: list[MetricRecord]
    result: ResultEvent | None
    error: ErrorEvent | None

    @property
    def elapsed_ms(self) -> int | None:
        if self.run.finished_at is None:
            return None
        return int((self.run.finished_at - self.run.started_at).total_seconds() * 1000)

    def events(self) -> list[Message]:
        """The view as the live channel's events: status, output, metrics, then result and/or error."""
        run = self.run
        ids = (run.notebook_id, run.cell_id, run.id)
        events: list[Message] = [CellStatusEvent(*ids, cast(CellState, run.status), self.elapsed_ms, run.user_id)]
        events += [OutputEvent(c.text, c.source, c.stream, *ids, c.seq) for c in self.head]
        if self.hidden is not None:
            events.append(self.hidden)
            events += [OutputEvent(c.text, c.source, c.stream, *ids, c.seq) for c in self.tail]
        events += [MetricsEvent(m.values, m.source, m.step, *ids, m.seq, m.ts) for m in self.metrics]
        events += [e for e in (self.result, self.error) if e is not None]
        return events


def _stored(cls: type[_Stored], stored: Mapping[str, Any] | None, run: RunRecord) -> _Stored | None:
    """A stored result or error as its event, addressed to its run.

    Only the event's own fields are read, and the ids come from the run: rows written by older
    versions (or `fail_unfinished_runs`, which stores no ids) still show.
    """
    if not stored:
        return None
    names = {f.name for f in dataclasses.fields(cls)}
    data = {k: v for k, v in stored.items() if k in names}
    data.update(notebook_id=run.notebook_id, cell_id=run.cell_id, run_id=run.id)
    return cls(**data)


def gaps(sizes: list[tuple[int, int]], since: int, hidden_bytes: int) -> list[tuple[int, int, int]]:
    """The seqs after `since` without a row: the hidden middle of a run with a log file (keeper.py).

    Its size is the run's hidden_bytes: for a viewer that resumes inside the middle that is the
    whole middle's size, not only the part after its seq (sizes of dropped chunks are not kept).
    """
    out: list[tuple[int, int, int]] = []
    expected = since + 1
    for seq, _ in sizes:
        if seq > expected:
            out.append((expected, seq - 1, hidden_bytes))
        expected = seq + 1
    return out


def view_run(store: RunStore, run: RunRecord, *, inline_bytes: int, result_rows: int,
             since: int = 0, metrics_since: int = 0) -> RunView:
    """The view of `run` after the output seq `since` and metric seq `metrics_since` a viewer has."""
    sizes = store.output_sizes(run.id, since)
    shown = plan(sizes, inline_bytes, gaps(sizes, since, run.hidden_bytes))

    def chunks(seqs: list[int]) -> list[OutputRecord]:
        return store.outputs_between(run.id, seqs[0], seqs[-1]) if seqs else []

    hidden = None
    if shown.hidden_seqs is not None:
        first, last = shown.hidden_seqs
        hidden = OutputHiddenEvent(run.notebook_id, run.cell_id, run.id, first, last, shown.hidden_bytes,
                                   log_url(run.id))
    result = _stored(ResultEvent, run.result, run)
    if result is not None:
        result = dataclasses.replace(result, rows=result.rows[:result_rows])
    return RunView(run=run, head=chunks(shown.head), hidden=hidden, tail=chunks(shown.tail),
                   metrics=store.metrics_for(run.id, metrics_since), result=result,
                   error=_stored(ErrorEvent, run.error, run))


def latest_views(store: RunStore, notebook_id: NotebookId, *, inline_bytes: int, result_rows: int,
                 since: Mapping[str, int] | None = None,
                 metrics_since: Mapping[str, int] | None = None) -> dict[str, RunView]:
    """The view of the latest run of every cell (cell_id -> view), oldest run first.

    since / metrics_since: {run_id: seq} a viewer already has (a reconnecting page).
    """
    runs = sorted(store.latest_runs(notebook_id, with_outputs=False).values(), key=lambda r: r.started_at)
    since, metrics_since = since or {}, metrics_since or {}
    return {run.cell_id: view_run(store, run, inline_bytes=inline_bytes, result_rows=result_rows,
                                  since=int(since.get(run.id, 0)), metrics_since=int(metrics_since.get(run.id, 0)))
            for run in runs}

