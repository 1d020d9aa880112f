"""The socket replay of stored runs, and the full log of a run as text.

On join (under the notebook's lock, console/server/sessions/kernels.py) a viewer is sent the latest run
of every cell as events, through the one stored-run view (console/outputs/view.py): big outputs
keep their head and tail, the middle becomes one OutputHiddenEvent with its size in bytes and
the download link, so nobody is silently cut off.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from console.ids import NotebookId, RunId
from console.outputs.logfile import LogFolder, LogRenderer, read_log
from console.outputs.view import latest_views
from console.protocols import RunStore
from console.store.records import OutputRecord
from console.wire.browser import CellStatusEvent
from console.wire.codec import Message

log = logging.getLogger(__name__)


def notebook_events(store: RunStore, notebook_id: NotebookId, since: Mapping[str, int],
                    metrics_since: Mapping[str, int], *, inline_bytes: int, result_rows: int) -> list[Message]:
    """The latest run of every cell, oldest first, each after what the viewer already has."""
    views = latest_views(store, notebook_id, inline_bytes=inline_bytes, result_rows=result_rows,
                         since=since, metrics_since=metrics_since)
    names: dict[int, str] = {}  # user id -> shown name, looked up once per replay
    return [_named(store, event, names) for view in views.values() for event in view.events()]


def _named(store: RunStore, event: Message, names: dict[int, str]) -> Message:
    """A stored run's status with the name of who ran it (the notebook's session is shared)."""
    user_id = getattr(event, "user_id", None)
    if not isinstance(event, CellStatusEvent) or user_id is None:
        return event
    if user_id not in names:
        try:
            user = store.get_user(user_id)
            names[user_id] = str(user.display_name or user.username)
        except Exception:  # an account deleted since: its id still says who
            names[user_id] = f"user {user_id}"
    return dataclasses.replace(event, run_by=names[user_id])


def log_lines(chunks: Iterable[OutputRecord]) -> Iterator[str]:
    """The full log as text from stored chunks (a run from before log files, whose rows are all
    its output): what its log file would hold (logfile.LogRenderer)."""
    renderer = LogRenderer()
    for c in chunks:
        yield renderer.feed(c)


def full_log(store: RunStore, data_dir: Path, run_id: RunId) -> Iterator[bytes]:
    """The run's whole log as UTF-8 blocks: from its log file, or from its rows (older runs).

    A file being written (a run in flight) reads up to its last whole batch so far.
    """
    rel = store.log_file_of(run_id)
    fh = None
    if rel:
        try:
            fh = LogFolder(data_dir).open(rel)
        except (OSError, ValueError) as exc:  # a link or a foreign place is never followed
            log.warning("run %s names the log file %s, which cannot be opened: %s", run_id, rel, exc)
    if fh is not None:
        yield from read_log(fh)
        return
    if rel:
        log.warning("run %s names the log file %s, which is missing; giving its stored rows", run_id, rel)
    for text in log_lines(store.iter_outputs(run_id)):
        yield text.encode("utf-8")


def repair_unfinished(store: RunStore, data_dir: Path) -> int:
    """Before a starting server closes what the last one left running: cut each such run's log
    file to the batches the database has (logfile.repair). Returns the runs whose file was cut."""
    cut = 0
    logs = LogFolder(data_dir)
    for run_id, rel, last_seq in store.unfinished_logs():
        try:
            if logs.repair(rel, last_seq):
                cut += 1
        except (OSError, ValueError):
            log.exception("repairing the log file %s of run %s failed", rel, run_id)
    return cut
