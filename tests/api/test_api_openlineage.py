"""OpenLineage run events through the real server and a real kernel (issue 32 item 3): with
CONSOLE_OPENLINEAGE_URL set, a cell that reads one delta table and writes another sends START and
COMPLETE with both tables and their versions; a failing cell sends FAIL, a job's cells their own
events; a receiver that never answers, or none at all, neither slows nor breaks a run. Each event
is checked against the client's own event classes (the package ships no JSON schema): built back
from the JSON, so a run id that is no UUID, a time without time, a producer or schema URL that is
no URI fails."""
from __future__ import annotations

import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

from console.config import load_config
from console.server.sessions.kernels import SessionManager
from console.server.sessions.openlineage import Emitter, RunFacts, run_uuid, split_url
from tests.support.clients import http, runs_ended
from tests.support.jobs import after_runs, jobs_server
from tests.support.live_server import LiveServer


class Lineage:
    """An OpenLineage receiver on 127.0.0.1: keeps each event POSTed to /api/v1/lineage; while
    `stall` is clear it holds every request unanswered (a receiver that hangs)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.paths: set[str] = set()
        self.stall = threading.Event()
        self.stall.set()
        self._came = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                outer.stall.wait(600)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._came:
                    outer.events.append(body)
                    outer.paths.add(self.path)
                    outer._came.notify_all()
                self.send_response(201)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def of(self, run_id: str, states: set[str], timeout: float = 60.0) -> dict[str, dict[str, Any]]:
        """The run's events by type once each of `states` has come (AssertionError after `timeout`)."""
        want = run_uuid(run_id)

        def mine() -> dict[str, dict[str, Any]]:
            return {e["eventType"]: e for e in self.events if e["run"]["runId"] == want}

        with self._came:
            if not self._came.wait_for(lambda: states <= set(mine()), timeout):
                raise AssertionError(f"events {states} of run {run_id} did not come: {sorted(mine())}")
            return mine()

    def close(self) -> None:
        self.stall.set()
        self.httpd.shutdown()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Lineage]:
    r = Lineage()
    yield r
    r.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, receiver: Lineage) -> Iterator[LiveServer]:
    # Its scheduler runs too: a job's cells are runs like any other, and send their events.
    with jobs_server(str(tmp_path_factory.mktemp("openlineage-data")), OPENLINEAGE_URL=receiver.url,
                     OPENLINEAGE_NAMESPACE="test-console") as server:
        yield server


def checked(d: dict[str, Any]) -> RunEvent:
    """The event built back with the client's classes: their validators check what the spec requires."""
    for key in ("eventType", "eventTime", "run", "job", "producer", "schemaURL"):
        assert d.get(key), (key, d)
    assert d["job"]["namespace"] and d["job"]["name"] and d["run"]["runId"], d
    assert str(uuid.UUID(d["run"]["runId"])) == d["run"]["runId"], d
    event = RunEvent(eventType=RunState(d["eventType"]), eventTime=d["eventTime"], run=Run(runId=d["run"]["runId"]),
                     job=Job(namespace=d["job"]["namespace"], name=d["job"]["name"]),
                     inputs=[InputDataset(namespace=i["namespace"], name=i["name"]) for i in d.get("inputs", [])],
                     outputs=[OutputDataset(namespace=o["namespace"], name=o["name"]) for o in d.get("outputs", [])],
                     producer=d["producer"])
    assert event.schemaURL == d["schemaURL"], d  # the spec version the client's classes were generated from
    return event


def run(live: LiveServer, nb: Any, cell: int, status: str = "done") -> str:
    code, answer = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": nb.cells[cell].id})
    assert code == 202, answer
    (r,) = runs_ended(live, answer["run_ids"])
    assert r.status == status, r.error
    return str(answer["run_ids"][0])


def test_a_cell_reading_and_writing_delta_tables_sends_start_and_complete(live: LiveServer,
                                                                         receiver: Lineage) -> None:
    nb = live.notebook("select 1 as a as t;\nsave overwrite t as delta.`ol.src`;",
                       "load delta.`ol.src` as s;\nselect a from s as u;\nsave overwrite u as delta.`ol.dst`;")
    run(live, nb, 0)
    run_id = run(live, nb, 1)
    events = receiver.of(run_id, {"START", "COMPLETE"})
    for e in events.values():
        checked(e)
        assert e["job"] == {**e["job"], "namespace": "test-console", "name": f"/{nb.name}.cell-{nb.cells[1].id}"}
    assert events["START"]["eventTime"] <= events["COMPLETE"]["eventTime"]
    assert receiver.paths == {"/api/v1/lineage"}  # a URL without a path posts where Marquez takes events

    done = events["COMPLETE"]
    lake = live.manager.cfg.data_dir / "lake"
    (read,) = done["inputs"]
    (wrote,) = done["outputs"]
    assert (read["namespace"], read["name"]) == ("file", str(lake / "ol" / "src")), read
    assert read["facets"]["version"]["datasetVersion"] == "0", read
    assert read["facets"]["symlinks"]["identifiers"] == [{"namespace": "test-console", "name": "ol.src",
                                                           "type": "TABLE"}], read
    assert read["facets"]["storage"]["storageLayer"] == "delta", read
    assert (wrote["namespace"], wrote["name"]) == ("file", str(lake / "ol" / "dst")), wrote
    assert wrote["facets"]["version"]["datasetVersion"] == "0", wrote
    # Columns from the table's own log (the version sent is its latest): a is what the select made.
    assert [f["name"] for f in wrote["facets"]["schema"]["fields"]] == ["a"], wrote
    assert [f["name"] for f in read["facets"]["schema"]["fields"]] == ["a"], read
    assert (events["START"]["inputs"], events["START"]["outputs"]) == ([], [])

    # The writer of ol.src, run before, wrote v0 of it; a second write is v1.
    again = run(live, nb, 0)
    (v1,) = receiver.of(again, {"COMPLETE"})["COMPLETE"]["outputs"]
    assert (v1["name"], v1["facets"]["version"]["datasetVersion"]) == (str(lake / "ol" / "src"), "1"), v1


def test_a_failing_cell_sends_fail_with_its_error(live: LiveServer, receiver: Lineage) -> None:
    nb = live.notebook("load delta.`ol.missing_table` as m;\nselect * from m as x;")
    run_id = run(live, nb, 0, status="error")
    events = receiver.of(run_id, {"START", "FAIL"})
    checked(events["FAIL"])
    assert "COMPLETE" not in events
    facet = events["FAIL"]["run"]["facets"]["errorMessage"]
    assert facet["message"] and facet["programmingLanguage"] == "MLSQL", facet


def test_a_jobs_cells_send_their_events(live: LiveServer, receiver: Lineage) -> None:
    nb = live.notebook("select 7 as a as t;\nsave overwrite t as delta.`ol.by_job`;", "select 1 as b as u;")
    code, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "name": "nightly", "every_minutes": 600})
    assert code == 201, job
    code, queued = http(live, "POST", f"/api/jobs/{job['id']}/run", {})
    assert code == 202, queued

    def settled() -> list[dict[str, Any]] | None:
        code, body = http(live, "GET", f"/api/jobs/{job['id']}/runs")
        assert code == 200, body
        runs = body["runs"]
        return runs if runs and runs[0]["status"] not in ("queued", "running") else None

    (job_run,) = after_runs(live, settled, "the job's run")
    assert job_run["status"] == "done" and len(job_run["run_ids"]) == 2, job_run
    first, second = (receiver.of(r, {"START", "COMPLETE"})["COMPLETE"] for r in job_run["run_ids"])
    for e, cell in ((first, nb.cells[0]), (second, nb.cells[1])):
        checked(e)
        assert e["job"]["name"] == f"/{nb.name}.cell-{cell.id}", e
    (wrote,) = first["outputs"]
    assert wrote["facets"]["symlinks"]["identifiers"][0]["name"] == "ol.by_job", wrote


def test_a_receiver_that_never_answers_neither_slows_nor_breaks_runs(live: LiveServer, receiver: Lineage,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    nb = live.notebook("select 1 as a as t;")
    run(live, nb, 0)
    emitter = live.manager.lineage
    assert emitter is not None and emitter.idle(90)
    sent, failed = emitter.sent, emitter.failed
    # The sender waits on the receiver for as long as it holds a POST (no 5 s timeout here): a run
    # that waited on its events would never end while the receiver stalls, whatever the machine's load.
    monkeypatch.setattr(emitter.transport, "timeout", 3600.0)
    receiver.stall.clear()
    try:
        ids = [run(live, nb, 0) for _ in range(3)]
        assert (emitter.sent, emitter.failed) == (sent, failed), "a run ended only after its events went"
    finally:
        receiver.stall.set()
    for run_id in ids:  # once the receiver answers, the queued events go out
        checked(receiver.of(run_id, {"START", "COMPLETE"}, timeout=90)["COMPLETE"])


def test_a_receiver_that_is_down_drops_the_oldest_and_never_blocks(live: LiveServer, tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with socket.socket() as s:  # a port nothing listens on once this closes
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = load_config({"OPENLINEAGE_URL": f"http://ol:secret@127.0.0.1:{port}/lineage", "DATA_DIR": str(tmp_path)},
                      environ={})
    emitter = Emitter(cfg, live.store, queue_events=3)
    assert emitter.transport.endpoint == "lineage" and emitter.shown == f"http://127.0.0.1:{port}"
    try:
        with emitter._cv:  # the sender cannot take an event while this holds its lock: each put is
            # queued or drops the oldest, never waits on the network (a put that did would hang here)
            for n in range(20):
                emitter.put(RunFacts("START", time.time(), f"r{n}", "nb", "c1", "mlsql"))
        assert emitter.dropped >= 20 - 3 - 1, emitter.dropped  # the queue keeps 3 (and one may be sending)
        assert emitter.idle(60), "the sender never caught up with a refused receiver"
        assert emitter.sent == 0 and emitter.failed + emitter.dropped == 20, (emitter.failed, emitter.dropped)
        # One warning per burst: one that events are dropped, one that sending fails, not one per event.
        # urllib3's warning of each retry, one per event, is not logged from the sender either.
        said = [r.getMessage() for r in caplog.records if r.name == "console.server.sessions.openlineage"
                or r.threadName == "openlineage-sender"]
        assert len(said) == 2 and any("dropped" in m for m in said) and any("fails" in m for m in said), said
        assert "secret" not in " ".join(said), said  # the URL's password is not logged
    finally:
        emitter.close()


def test_without_the_setting_nothing_is_built(tmp_path: Path) -> None:
    from console.store import Store

    cfg = load_config({"DATA_DIR": str(tmp_path)}, environ={})
    assert cfg.OPENLINEAGE_URL is None
    store = Store(f"sqlite:///{tmp_path / 'console.db'}")
    assert SessionManager(cfg, store, lambda nb, msgs: None).lineage is None
    assert split_url("https://lineage.example/ol/events?x=1") == ("https://lineage.example", "ol/events?x=1")
    with pytest.raises(ValueError, match="CONSOLE_OPENLINEAGE_URL"):
        load_config(environ={"CONSOLE_OPENLINEAGE_URL": "ftp://host/x"})
