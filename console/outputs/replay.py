"""The socket replay of stored runs, and the full log of a run as text.

On join (under the notebook's lock, console/server/kernels.py) a viewer is sent the latest run
of every cell as events, through the one stored-run view (console/outputs/view.py): big outputs
keep their head and tail, the middle becomes one OutputHiddenEvent with its size in bytes and
the download link, so nobody is silently cut off.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from console.messages import Message
from console.ids import NotebookId
from console.outputs.view import latest_views
from console.protocols import RunStore
from console.store.records import OutputRecord


def notebook_events(store: RunStore, notebook_id: NotebookId, since: Mapping[str, int],
                    metrics_since: Mapping[str, int], *, inline_bytes: int, result_rows: int) -> list[Message]:
    """The latest run of every cell, oldest first, each after what the viewer already has."""
    views = latest_views(store, notebook_id, inline_bytes=inline_bytes, result_rows=result_rows,
                         since=since, metrics_since=metrics_since)
    return [event for view in views.values() for event in view.events()]


def log_lines(chunks: Iterable[OutputRecord]) -> Iterator[str]:
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
