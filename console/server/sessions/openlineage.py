"""OpenLineage run events for every stored run, sent to CONSOLE_OPENLINEAGE_URL (docs/lineage.md).

A run that starts sends START; its end, stored with its manifest (kernels.py _finish), sends
COMPLETE, FAIL or ABORT with what the manifest says it read and wrote: a lineage server such as
Marquez then draws which cells fed which tables, across notebooks and tools. The events are built
with the OpenLineage client's own classes and sent by its HTTP transport, so they follow the
spec the client was generated from.

Nothing here may slow or break a run: the session manager only puts the run's facts (plain values)
on a bounded queue, and one background thread builds and sends the events. When the receiver is
slow or down the queue fills and the oldest events are dropped and counted, with one warning per
burst. The URL is the admin's setting, never a member's, so loopback and private receivers are
allowed (unlike a job's webhook, console/server/jobs/webhook.py). Unset, SessionManager builds no Emitter.
"""
from __future__ import annotations

import logging
from importlib import metadata
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol
from urllib.parse import urlsplit

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (dataset_version_dataset, error_message_run, input_statistics_input_dataset,
                                         job_type_job, output_statistics_output_dataset, schema_dataset,
                                         storage_dataset, symlinks_dataset)
from openlineage.client.facet_v2 import DatasetFacet, InputDatasetFacet, JobFacet, OutputDatasetFacet, RunFacet
from openlineage.client.transport.http import HttpConfig, HttpTransport

from console.config import Config
from console.server import lake_read
from console.server.sessions.manifests import lake_name

log = logging.getLogger(__name__)



def _version() -> str:
    try:
        return metadata.version("mlsql-console")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "dev"


# Who made an event (the spec asks for a URI): this console and its version.
PRODUCER = f"https://github.com/mlsql-console/mlsql-console-python/releases/{_version()}"
DEFAULT_ENDPOINT = "api/v1/lineage"  # where Marquez and the reference receivers take events
QUEUE_EVENTS = 1000  # events waiting to be sent; past it the oldest go
SEND_TIMEOUT_S = 5.0  # one POST's connect and read timeout
# The transport retries a refused or 5xx POST; few tries, so a dead receiver costs the sender thread
# seconds per event, not minutes (the queue still drops what it cannot keep up with).
RETRY = {"total": 2, "connect": 2, "read": 1, "backoff_factor": 0.2}
# A stable namespace for the events' run ids: uuid5 of the console's run id, the same id every time.
RUN_ID_NAMESPACE = uuid.UUID("3b0c6f0e-9a55-5c0a-8d3e-6d6c73716c31")
_ENDED = {"done": RunState.COMPLETE, "error": RunState.FAIL, "interrupted": RunState.ABORT,
          "cancelled": RunState.ABORT}


class NotebookNames(Protocol):
    """What the sender asks the store: a notebook's folder and name (a job's name is its path)."""

    def get_notebook(self, notebook_id: Any) -> Any: ...


@dataclass(frozen=True)
class RunFacts:
    """One event's worth of a run, as plain values taken on the run's thread (nothing built there)."""

    state: str  # START, COMPLETE, FAIL, ABORT
    at: float  # when, seconds since the epoch
    run_id: str
    notebook_id: str
    cell_id: str
    kind: str = ""  # the cell's language: mlsql or python
    entries: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


def run_uuid(run_id: str) -> str:
    """The event's run id: a UUID derived from the console's run id, so START and its end match."""
    return str(uuid.uuid5(RUN_ID_NAMESPACE, run_id))


def split_url(url: str) -> tuple[str, str]:
    """(base, endpoint) for the client's transport: a URL without a path posts to api/v1/lineage."""
    parts = urlsplit(url.strip())
    endpoint = parts.path.lstrip("/") or DEFAULT_ENDPOINT
    if parts.query:
        endpoint += f"?{parts.query}"
    return f"{parts.scheme}://{parts.netloc}", endpoint


SENDER_THREAD = "openlineage-sender"


class _QuietRetries(logging.Filter):
    """urllib3 warns of each retry it makes; from the sender those are one warning per event while a
    receiver is down, so they are dropped there (the sender warns once per burst itself)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != SENDER_THREAD


_QUIET = _QuietRetries()


class Emitter:
    """The background sender: facts in on any thread, events out on its own one."""

    def __init__(self, cfg: Config, names: NotebookNames, queue_events: int = QUEUE_EVENTS) -> None:
        assert cfg.OPENLINEAGE_URL, "no Emitter without CONSOLE_OPENLINEAGE_URL"
        base, endpoint = split_url(cfg.OPENLINEAGE_URL)
        self.namespace = cfg.OPENLINEAGE_NAMESPACE
        self.lake = cfg.data_dir / "lake"
        self.names = names
        self.transport = HttpTransport(HttpConfig(url=base, endpoint=endpoint, timeout=SEND_TIMEOUT_S,
                                                  retry=dict(RETRY)))
        self._queue: deque[RunFacts] = deque(maxlen=queue_events)
        self._cv = threading.Condition()
        self._stop = False
        self._busy = False  # the thread holds an event it has taken off the queue
        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self._dropping = False  # warned of this burst of drops already
        self._failing = False  # warned of this burst of failed sends already
        # Where the logs say events go: without a user and password the URL may carry for the receiver.
        parts = urlsplit(base)
        self.shown = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        self._secrets = [x for x in (parts.username, parts.password) if x]
        logging.getLogger("urllib3.connectionpool").addFilter(_QUIET)  # one filter object: added once
        self._thread = threading.Thread(target=self._loop, name=SENDER_THREAD, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ the runs' side (never blocks)
    def put(self, facts: RunFacts) -> None:
        with self._cv:
            if len(self._queue) == self._queue.maxlen:
                self.dropped += 1  # the deque drops the oldest as the newest goes in
                if not self._dropping:
                    self._dropping = True
                    log.warning("OpenLineage events are dropped: %d wait for %s, which is slow or down; the "
                                "oldest go until it catches up", len(self._queue), self.shown)
            self._queue.append(facts)
            self._cv.notify()

    def started(self, run_id: str, notebook_id: str, cell_id: str, kind: str) -> None:
        """The kernel began the run: START (nothing is read or written yet)."""
        self.put(RunFacts("START", time.time(), run_id, notebook_id, cell_id, kind))

    def ended(self, run_id: str, notebook_id: str, cell_id: str, kind: str, status: str, began: bool,
              manifest: dict[str, Any] | None, error: str) -> None:
        """The run's end is stored: COMPLETE, FAIL or ABORT with its manifest's entries. A run cancelled
        before it began (a queue cancelled, Run all stopped above it) ran nothing: no event."""
        if status not in _ENDED or (not began and status == "cancelled"):
            return
        entries = list((manifest or {}).get("entries") or [])
        self.put(RunFacts(_ENDED[status].name, time.time(), run_id, notebook_id, cell_id, kind, entries,
                          error if status == "error" else ""))

    def idle(self, timeout: float) -> bool:
        """Whether everything put so far has been sent or given up on, within `timeout` seconds."""
        with self._cv:
            return self._cv.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self, timeout: float = 2.0) -> None:
        """Stop the sender, giving what is queued `timeout` seconds (a server stopping waits no longer)."""
        self.idle(timeout)
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        self._thread.join(timeout=0.5)

    # ------------------------------------------------------------ the sender's side
    def _loop(self) -> None:
        while True:
            with self._cv:
                self._busy = False
                self._cv.notify_all()
                self._cv.wait_for(lambda: self._queue or self._stop)
                if self._stop:
                    return
                facts = self._queue.popleft()
                self._busy = True
                if not self._queue:
                    self._dropping = False  # caught up: a later drop is a new burst
            self._send(facts)

    def _send(self, facts: RunFacts) -> None:
        try:
            self.transport.emit(self.event(facts))
        except Exception as exc:  # a receiver down or refusing, or a fault of ours: never the run's
            self.failed += 1
            if not self._failing:
                self._failing = True
                log.warning("sending OpenLineage events to %s fails (%s); later failures are not logged "
                            "until one is sent", self.shown, self._scrubbed(exc))
            return
        self.sent += 1
        if self._failing:
            self._failing = False
            log.info("OpenLineage events reach %s again", self.shown)

    def _scrubbed(self, exc: Exception) -> str:
        """What went wrong, as the log may show it: without the URL's user and password."""
        text = f"{type(exc).__name__}: {exc}"[:300]
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    # ------------------------------------------------------------ building an event
    def event(self, facts: RunFacts) -> RunEvent:
        """The RunEvent for one run's facts (public: the tests build events the way the sender does)."""
        run_facets: dict[str, RunFacet] = {}
        if facts.error:
            run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
                message=facts.error[:4000], programmingLanguage="python" if facts.kind == "python" else "MLSQL")
        job_facets: dict[str, JobFacet] = {"jobType": job_type_job.JobTypeJobFacet(
            processingType="BATCH", integration="MLSQL_CONSOLE", jobType="CELL")}
        reads = [e for e in facts.entries if e.get("access") == "read"]
        writes = [e for e in facts.entries if e.get("access") == "write"]
        return RunEvent(
            eventType=RunState[facts.state],
            eventTime=datetime.fromtimestamp(facts.at, timezone.utc).isoformat(),
            run=Run(runId=run_uuid(facts.run_id), facets=run_facets),
            job=Job(namespace=self.namespace, name=self.job_name(facts), facets=job_facets),
            inputs=[self._input(e) for e in reads],
            outputs=[self._output(e) for e in writes],
            producer=PRODUCER,
        )

    def job_name(self, facts: RunFacts) -> str:
        """/folder/notebook.cell-<id>: the notebook's path as the page shows it, then the cell."""
        try:
            nb = self.names.get_notebook(facts.notebook_id)
            path = f"{str(nb.folder).rstrip('/')}/{nb.name}"
        except Exception:  # a notebook deleted since: its id still names the job
            path = f"/notebook-{facts.notebook_id}"
        return f"{path}.cell-{facts.cell_id}"

    def _dataset(self, e: dict[str, Any]) -> tuple[str, str, dict[str, DatasetFacet]]:
        """(namespace, name, facets) of an entry: a file path on this machine, as OpenLineage names files."""
        fmt, path = str(e.get("format", "")).lower(), str(e.get("path", ""))
        facets: dict[str, DatasetFacet] = {}
        table = lake_name(path) if fmt == "delta" and e.get("verified") else None
        if table is not None:  # a delta table of the lake, checked against its log (manifests.verify)
            db, name = table.split(".", 1)
            path = str(self.lake / db / name)
            facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(identifiers=[symlinks_dataset.Identifier(
                namespace=self.namespace, name=table, type="TABLE")])
            fields = self._columns(lake_read.Table(db, name), e.get("version"))
            if fields:
                facets["schema"] = schema_dataset.SchemaDatasetFacet(fields=fields)
        elif path.startswith("lake:"):  # a file of the data folder, shown as lake:… (kernel's manifest)
            path = str(self.lake / path[len("lake:"):].lstrip("/"))
        if fmt == "delta":
            facets["storage"] = storage_dataset.StorageDatasetFacet(storageLayer="delta", fileFormat="parquet")
        if e.get("version") is not None:
            facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(e["version"]))
        elif e.get("digest"):  # a plain file's content, as far as the kernel hashed it
            facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(e["digest"]))
        return "file", path, facets

    def _columns(self, t: lake_read.Table, version: Any) -> list[schema_dataset.SchemaDatasetFacetFields]:
        """The table's columns as its log says, when the entry's version is the log's latest (the
        manifest holds no columns, and the data panel's reader gives the latest schema only): a
        table written again before this event is sent gets no schema rather than a later one."""
        try:
            latest = lake_read.summary(self.lake, t)  # no link followed, every size capped
        except Exception:  # a fault of ours must not lose the event
            log.exception("reading the schema of %s for OpenLineage failed", t.name)
            return []
        if latest.get("error") or latest.get("version") != version:
            return []
        return [schema_dataset.SchemaDatasetFacetFields(name=c["name"], type=c["type"])
                for c in latest.get("schema", [])]

    def _input(self, e: dict[str, Any]) -> InputDataset:
        namespace, name, facets = self._dataset(e)
        stats: dict[str, InputDatasetFacet] = {}
        if e.get("size") is not None:
            stats["inputStatistics"] = input_statistics_input_dataset.InputStatisticsInputDatasetFacet(
                size=int(e["size"]), fileCount=_int(e.get("files")))
        return InputDataset(namespace=namespace, name=name, facets=facets, inputFacets=stats)

    def _output(self, e: dict[str, Any]) -> OutputDataset:
        namespace, name, facets = self._dataset(e)
        stats: dict[str, OutputDatasetFacet] = {}
        if e.get("size") is not None:
            stats["outputStatistics"] = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                size=int(e["size"]), fileCount=_int(e.get("files")))
        return OutputDataset(namespace=namespace, name=name, facets=facets, outputFacets=stats)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) else None


__all__ = ["Emitter", "RunFacts", "run_uuid", "split_url"]
