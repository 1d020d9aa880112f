"""Runs of cells and what they produced: output chunks and metric points, numbered by seq.

The session layer numbers chunks (1, 2, 3 ... per run) as they stream; a reconnecting page asks
for outputs_since(run_id, last_seq). `latest_runs` is each cell's newest run; what a viewer is
shown of it (head and tail of a big output) is planned in console/outputs/ from `output_sizes`.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sqlalchemy import Integer, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from console.ids import CellId, NotebookId, RunId, UserId
from console.store.db import StoreBase, new_id
from console.store.errors import Exists, Invalid, NotFound
from console.store.manifests import put_manifest
from console.store.models import MetricPoint, Notebook, OutputChunk, Run, utcnow
from console.store.records import MetricRecord, OutputRecord, RunRecord

RUN_STATES = ("queued", "running", "done", "error", "interrupted", "cancelled")
FINAL_STATES = ("done", "error", "interrupted", "cancelled")


def _get(item: Any, name: str, default: Any = None) -> Any:
    """Read a field from a mapping or an object (dicts, OutputEvent, MetricsEvent all work)."""
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


def _run(r: Run, outputs: list[OutputRecord] | None = None, metrics: list[MetricRecord] | None = None) -> RunRecord:
    return RunRecord(
        id=RunId(r.id), notebook_id=NotebookId(r.notebook_id), cell_id=CellId(r.cell_id),
        user_id=None if r.user_id is None else UserId(r.user_id), status=r.status,
        started_at=r.started_at, finished_at=r.finished_at, source=r.source, error=r.error,
        result=r.result, output_bytes=r.output_bytes, hidden_bytes=r.hidden_bytes,
        outputs=outputs, metrics=metrics,
    )


class _Utf8Bytes(FunctionElement[int]):
    """The UTF-8 length in bytes of a text column (SQL's length() counts characters)."""

    type = Integer()
    inherit_cache = True


@compiles(_Utf8Bytes)
def _octet_length(element: _Utf8Bytes, compiler: SQLCompiler, **kw: Any) -> str:
    return f"octet_length({compiler.process(element.clauses, **kw)})"


@compiles(_Utf8Bytes, "sqlite")
def _sqlite_blob_length(element: _Utf8Bytes, compiler: SQLCompiler, **kw: Any) -> str:
    # SQLite keeps text as UTF-8; as a BLOB its length is counted in bytes. (octet_length()
    # only came with SQLite 3.43.)
    return f"length(CAST({compiler.process(element.clauses, **kw)} AS BLOB))"


def _output(c: OutputChunk) -> OutputRecord:
    return OutputRecord(run_id=RunId(c.run_id), seq=c.seq, text=c.text, source=c.source, stream=c.stream, ts=c.ts)


def _metric(m: MetricPoint) -> MetricRecord:
    return MetricRecord(run_id=RunId(m.run_id), seq=m.seq, values=m.values, source=m.source, step=m.step, ts=m.ts)


def _seq(item: Any) -> int:
    seq = _get(item, "seq")
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise Invalid(f"seq must be a positive integer, not {seq!r}")
    return seq


def _outputs(s: Session, run_ids: list[str], since: int = 0) -> dict[str, list[OutputRecord]]:
    out: dict[str, list[OutputRecord]] = {rid: [] for rid in run_ids}
    if run_ids:
        q = select(OutputChunk).where(OutputChunk.run_id.in_(run_ids), OutputChunk.seq > since)
        for c in s.scalars(q.order_by(OutputChunk.run_id, OutputChunk.seq)):
            out[c.run_id].append(_output(c))
    return out


def _metrics(s: Session, run_ids: list[str], since: int = 0) -> dict[str, list[MetricRecord]]:
    out: dict[str, list[MetricRecord]] = {rid: [] for rid in run_ids}
    if run_ids:
        q = select(MetricPoint).where(MetricPoint.run_id.in_(run_ids), MetricPoint.seq > since)
        for m in s.scalars(q.order_by(MetricPoint.run_id, MetricPoint.seq)):
            out[m.run_id].append(_metric(m))
    return out


class RunsMixin(StoreBase):
    def create_run(
        self, notebook_id: str, cell_id: str, source: str, user_id: int | None = None,
        status: str = "queued",
    ) -> RunRecord:
        if status not in RUN_STATES:
            raise Invalid(f"run status must be one of {', '.join(RUN_STATES)}")
        with self._write() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            r = Run(id=new_id(16), notebook_id=notebook_id, cell_id=cell_id, user_id=user_id,
                    status=status, started_at=utcnow(), source=source, output_bytes=0, hidden_bytes=0)
            s.add(r)
            s.flush()
            return _run(r)

    def get_run(self, run_id: str, with_outputs: bool = False) -> RunRecord:
        with self._read() as s:
            r = s.get(Run, run_id)
            if r is None:
                raise NotFound(f"no run {run_id!r}")
            if not with_outputs:
                return _run(r)
            return _run(r, _outputs(s, [r.id])[r.id], _metrics(s, [r.id])[r.id])

    def list_runs(self, notebook_id: str) -> list[RunRecord]:
        """Every run of a notebook, oldest first (the run history, without outputs)."""
        with self._read() as s:
            q = select(Run).where(Run.notebook_id == notebook_id).order_by(Run.started_at, Run.id)
            return [_run(r) for r in s.scalars(q)]

    def set_run_status(self, run_id: str, status: str) -> RunRecord:
        """Move a run along (queued -> running); use finish_run for final states."""
        if status not in RUN_STATES:
            raise Invalid(f"run status must be one of {', '.join(RUN_STATES)}")
        with self._write() as s:
            r = s.get(Run, run_id)
            if r is None:
                raise NotFound(f"no run {run_id!r}")
            r.status = status
            if status == "running":
                r.started_at = utcnow()
            s.flush()
            return _run(r)

    def finish_run(
        self, run_id: str, status: str, error: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None, manifest: Mapping[str, Any] | None = None,
    ) -> RunRecord:
        """Record how a run ended: status done|error|interrupted|cancelled, the error event or result,
        and its manifest ({revision, params, entries, dropped}: console/store/manifests.py), in one
        commit, so a run seen ended has its manifest and a cell's end costs one write."""
        if status not in FINAL_STATES:
            raise Invalid(f"a finished run's status must be one of {', '.join(FINAL_STATES)}")
        with self._write() as s:
            r = s.get(Run, run_id)
            if r is None:
                raise NotFound(f"no run {run_id!r}")
            r.status, r.error, r.result, r.finished_at = status, error, result, utcnow()
            if manifest is not None:
                put_manifest(s, run_id, manifest)
            s.flush()
            return _run(r)

    def fail_unfinished_runs(self, status: str = "interrupted") -> int:
        """Close runs a previous server left queued or running (a crash, a kill); returns how many.

        Each gets an error saying why, so the page shows more than a status: its output up to the
        stop is kept (rows and log file; see console/outputs/logfile.repair, run before this).
        """
        with self._write() as s:
            res = s.execute(
                update(Run).where(Run.status.in_(("queued", "running")))
                .values(status=status, finished_at=utcnow(),
                        error={"kind": "kernel",
                               "message": "the server stopped while this cell ran; its output up to then is kept"})
            )
            return int(res.rowcount or 0)  # type: ignore[attr-defined]

    def unfinished_logs(self) -> list[tuple[RunId, str, int]]:
        """(run id, log file, last stored seq) of each queued or running run that has a log file."""
        last = (select(func.max(OutputChunk.seq)).where(OutputChunk.run_id == Run.id)
                .correlate(Run).scalar_subquery())
        q = select(Run.id, Run.log_file, last).where(Run.status.in_(("queued", "running")),
                                                     Run.log_file.is_not(None))
        with self._read() as s:
            return [(RunId(rid), str(path), int(seq or 0)) for rid, path, seq in s.execute(q)]

    def set_log_file(self, run_id: str, path: str) -> None:
        """Name the run's log file (relative to the data folder); its rows are then head and tail only."""
        with self._write() as s:
            r = s.get(Run, run_id)
            if r is None:
                raise NotFound(f"no run {run_id!r}")
            r.log_file = path

    def log_file_of(self, run_id: str) -> str | None:
        """The run's log file relative to the data folder, or None when all its output is in rows."""
        with self._read() as s:
            r = s.get(Run, run_id)
            if r is None:
                raise NotFound(f"no run {run_id!r}")
            return r.log_file

    def append_output(self, run_id: str, chunks: Iterable[Any], hidden_bytes: int = 0, *,
                      skipped_bytes: int = 0, drop: tuple[int, int] | None = None) -> int:
        """Store numbered output chunks ({seq, text, source, stream, ts} mappings or events).

        hidden_bytes: output newly left out of the rows (the middle of a huge log, kept in the
        run's log file). skipped_bytes: bytes of this batch's chunks that are not given (already
        in the middle), counted in output_bytes. drop: (first, last) seq of stored rows to delete
        (they left the tail). All in one transaction. Returns the run's output_bytes after this
        batch. A seq stored already raises Exists and the whole batch is left out.
        """
        rows = []
        added = int(skipped_bytes)
        for c in chunks:
            text = _get(c, "text", "")
            if not isinstance(text, str):
                raise Invalid("output text must be a string")
            added += len(text.encode("utf-8"))
            rows.append(OutputChunk(
                run_id=run_id, seq=_seq(c), text=text, source=_get(c, "source") or "driver",
                stream=_get(c, "stream") or "stdout", ts=float(_get(c, "ts") or time.time()),
            ))
        try:
            with self._write() as s:
                r = s.get(Run, run_id)
                if r is None:
                    raise NotFound(f"no run {run_id!r}")
                if drop is not None:
                    s.execute(delete(OutputChunk).where(OutputChunk.run_id == run_id, OutputChunk.seq >= drop[0],
                                                        OutputChunk.seq <= drop[1]))
                s.add_all(rows)
                r.output_bytes += added
                r.hidden_bytes += int(hidden_bytes)
                s.flush()
                return r.output_bytes
        except IntegrityError as exc:
            raise Exists(f"run {run_id}: an output chunk with one of these seq numbers exists") from exc

    def outputs_since(self, run_id: str, seq: int = 0) -> list[OutputRecord]:
        """The run's chunks with seq > `seq`, in order."""
        with self._read() as s:
            if s.get(Run, run_id) is None:
                raise NotFound(f"no run {run_id!r}")
            return _outputs(s, [run_id], seq)[run_id]

    def last_output_seq(self, run_id: str) -> int:
        with self._read() as s:
            return int(s.scalar(select(func.max(OutputChunk.seq)).where(OutputChunk.run_id == run_id)) or 0)

    def output_sizes(self, run_id: str, since: int = 0) -> list[tuple[int, int]]:
        """(seq, UTF-8 bytes of its text) of each chunk after `since`, in order; no text is loaded."""
        q = (select(OutputChunk.seq, _Utf8Bytes(OutputChunk.text))
             .where(OutputChunk.run_id == run_id, OutputChunk.seq > since).order_by(OutputChunk.seq))
        with self._read() as s:
            return [(int(seq), int(size or 0)) for seq, size in s.execute(q)]

    def outputs_between(self, run_id: str, first: int, last: int) -> list[OutputRecord]:
        """The run's chunks with first <= seq <= last, in order."""
        q = (select(OutputChunk).where(OutputChunk.run_id == run_id, OutputChunk.seq >= first,
                                       OutputChunk.seq <= last).order_by(OutputChunk.seq))
        with self._read() as s:
            return [_output(c) for c in s.scalars(q)]

    def iter_outputs(self, run_id: str, page: int = 500) -> Iterator[OutputRecord]:
        """Every chunk of a run, fetched `page` at a time (a log download never holds it all)."""
        after = 0
        while True:
            q = (select(OutputChunk).where(OutputChunk.run_id == run_id, OutputChunk.seq > after)
                 .order_by(OutputChunk.seq).limit(page))
            with self._read() as s:
                batch = [_output(c) for c in s.scalars(q)]
            if not batch:
                return
            yield from batch
            after = batch[-1].seq

    def append_metrics(self, run_id: str, points: Iterable[Any]) -> None:
        """Store numbered metric points ({seq, values, source, step, ts} mappings or MetricsEvents)."""
        rows = []
        for p in points:
            values = _get(p, "values")
            if not isinstance(values, Mapping):
                raise Invalid("metric values must be an object")
            step = _get(p, "step")
            rows.append(MetricPoint(
                run_id=run_id, seq=_seq(p), values=dict(values), source=_get(p, "source") or "driver",
                step=step if isinstance(step, int) else None, ts=float(_get(p, "ts") or time.time()),
            ))
        try:
            with self._write() as s:
                if s.get(Run, run_id) is None:
                    raise NotFound(f"no run {run_id!r}")
                s.add_all(rows)
        except IntegrityError as exc:
            raise Exists(f"run {run_id}: a metric point with one of these seq numbers exists") from exc

    def metrics_for(self, run_id: str, since: int = 0) -> list[MetricRecord]:
        with self._read() as s:
            if s.get(Run, run_id) is None:
                raise NotFound(f"no run {run_id!r}")
            return _metrics(s, [run_id], since)[run_id]

    def latest_runs(self, notebook_id: str, with_outputs: bool = True) -> dict[str, RunRecord]:
        """The newest run of each cell of the notebook (cell_id -> run), with all outputs and metrics.

        Viewers are shown a run through console/outputs/view.py, which reads only the chunks it
        shows (`output_sizes`, `outputs_between`); all outputs are for exports.
        """
        ranked = (
            select(Run.id, func.row_number().over(
                partition_by=Run.cell_id, order_by=(Run.started_at.desc(), Run.id.desc())
            ).label("rank"))
            .where(Run.notebook_id == notebook_id)
            .subquery()
        )
        q = select(Run).join(ranked, ranked.c.id == Run.id).where(ranked.c.rank == 1)
        with self._read() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            runs = list(s.scalars(q))
            if not with_outputs:
                return {r.cell_id: _run(r) for r in runs}
            ids = [r.id for r in runs]
            outs, mets = _outputs(s, ids), _metrics(s, ids)
            return {r.cell_id: _run(r, outs[r.id], mets[r.id]) for r in runs}

    def delete_finished_runs(self, notebook_id: str,
                             cell_ids: Iterable[str] | None = None) -> list[tuple[RunId, CellId, str | None]]:
        """"Clear outputs": forget the finished runs of these cells (None: of every cell), with
        their outputs and metrics, so no view shows them again. Runs still queued or running are
        kept (their output is still arriving). Returns (run id, cell id, log file) of each run
        deleted; the log files (relative to the data folder) are the caller's to remove."""
        with self._write() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            q = select(Run).where(Run.notebook_id == notebook_id, Run.status.in_(FINAL_STATES))
            if cell_ids is not None:
                q = q.where(Run.cell_id.in_(list(cell_ids)))
            runs = list(s.scalars(q))
            ids = [r.id for r in runs]
            gone = [(RunId(r.id), CellId(r.cell_id), r.log_file) for r in runs]
            for start in range(0, len(ids), 500):  # bounded IN lists
                part = ids[start:start + 500]
                s.execute(delete(OutputChunk).where(OutputChunk.run_id.in_(part)))
                s.execute(delete(MetricPoint).where(MetricPoint.run_id.in_(part)))
                s.execute(delete(Run).where(Run.id.in_(part)))
            return gone
