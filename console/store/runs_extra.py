"""Size-aware reads of a run's output for the session layer: chunk sizes, seq ranges, paging.

A huge log is never loaded whole: replay asks for the sizes first, then fetches only the head
and tail it shows inline; the log download pages through the chunks.
"""
from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import func, select

from console.store.models import OutputChunk
from console.store.records import OutputRecord
from console.store.store import Store


def output_sizes(store: Store, run_id: str, since: int = 0) -> list[tuple[int, int]]:
    """(seq, characters) of each chunk after `since`, in order."""
    q = (select(OutputChunk.seq, func.length(OutputChunk.text))
         .where(OutputChunk.run_id == run_id, OutputChunk.seq > since).order_by(OutputChunk.seq))
    with store._read() as s:
        return [(int(seq), int(size or 0)) for seq, size in s.execute(q)]


def outputs_between(store: Store, run_id: str, first: int, last: int) -> list[OutputRecord]:
    """Chunks with first <= seq <= last, in order."""
    q = (select(OutputChunk).where(OutputChunk.run_id == run_id, OutputChunk.seq >= first,
                                   OutputChunk.seq <= last).order_by(OutputChunk.seq))
    with store._read() as s:
        return [OutputRecord(run_id=c.run_id, seq=c.seq, text=c.text, source=c.source, stream=c.stream, ts=c.ts)
                for c in s.scalars(q)]


def iter_outputs(store: Store, run_id: str, page: int = 500) -> Iterator[OutputRecord]:
    """Every chunk of a run, fetched `page` at a time."""
    after = 0
    while True:
        q = (select(OutputChunk).where(OutputChunk.run_id == run_id, OutputChunk.seq > after)
             .order_by(OutputChunk.seq).limit(page))
        with store._read() as s:
            batch = [OutputRecord(run_id=c.run_id, seq=c.seq, text=c.text, source=c.source, stream=c.stream,
                                  ts=c.ts) for c in s.scalars(q)]
        if not batch:
            return
        yield from batch
        after = batch[-1].seq
