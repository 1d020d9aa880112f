"""A gigantic log end to end: 50 MB printed by a cell, replayed and downloaded; a server killed mid-run."""
from __future__ import annotations

import gzip
import os
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

from console.outputs.live import ViewerLog
from console.outputs.logfile import read_log
from tests.support.clients import Viewer, http, join
from tests.support.live_server import LiveServer, start_server

LINE = "x" * 99 + "\n"


def test_50_mb_is_replayed_as_head_and_tail_and_downloaded_byte_for_byte(server: LiveServer, viewer: Any) -> None:
    size = 50_000_000
    expected = LINE * (size // len(LINE))
    nb = server.notebook(f"--script\nbig {size}\n")
    v = viewer()
    join(v, nb)
    run_id = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)["run_ids"][0]
    assert v.wait_status(run_id, "done", "error", timeout=300)["status"] == "done"
    # Live, past the budget: the head, a growing marker and the latest tail, never every chunk.
    live = ViewerLog()
    for e in v.events:
        if e.get("run_id") == run_id:
            live.feed(e)
    assert len(v.outputs(run_id)) < size // 4096 // 10
    # The download is the file, byte for byte.
    with urllib.request.urlopen(f"{server.url}/api/runs/{run_id}/log", timeout=120) as resp:
        assert resp.read() == expected.encode()
    # The database holds the head and the tail only; a page loaded now shows them around one marker.
    rows = server.store.outputs_since(run_id)
    budget = server.manager.cfg.OUTPUT_INLINE_BYTES
    assert sum(len(r.text) for r in rows) <= budget
    later = viewer()
    join(later, nb)
    later.wait_status(run_id, "done")
    events = [e for e in later.events if e.get("run_id") == run_id and e["type"] in ("output", "output_hidden")]
    hidden = [e for e in events if e["type"] == "output_hidden"]
    assert len(hidden) == 1 and hidden[0]["hidden_bytes"] == size - sum(len(r.text) for r in rows)
    cut = events.index(hidden[0])
    head, tail = events[:cut], events[cut + 1:]
    assert [e["seq"] for e in head] == list(range(1, len(head) + 1))
    assert hidden[0]["first_seq"] == len(head) + 1 and hidden[0]["last_seq"] == tail[0]["seq"] - 1
    # The live viewer ended where a page loaded now starts.
    assert live.seqs == [e["seq"] for e in head] + [0] + [e["seq"] for e in tail]
    assert live.text == "".join(e["text"] for e in head + tail) and live.hidden_bytes == hidden[0]["hidden_bytes"]
    # A viewer that saw the first chunks live and reconnects gets the rest of the head, the marker, the tail.
    resumed = viewer()
    join(resumed, nb, since={run_id: 3})
    resumed.wait_status(run_id, "done")
    again = [e for e in resumed.events if e.get("run_id") == run_id and e["type"] in ("output", "output_hidden")]
    assert [e.get("seq", e.get("first_seq")) for e in again] == [e.get("seq", e.get("first_seq")) for e in events][3:]


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_a_server_killed_mid_run_leaves_a_consistent_store(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    first = start_server(data_dir)
    try:
        nb = first.notebook("big", "--script\nbig 2000000000\n")
        v = Viewer(first.url)
        assert v.command("join", notebook_id=nb["id"])["ok"]
        run_id = v.command("run_cell", notebook_id=nb["id"], cell_id=nb["cells"][0]["id"])["run_ids"][0]
        v.wait_for(lambda e: e["type"] == "output" and e["run_id"] == run_id and e["seq"] > 2000, timeout=120)
    finally:
        # kill -9: the gunicorn worker (it holds the batcher and the kernels' pipes), then its master.
        for pid in _children(first.proc.pid):
            os.kill(pid, signal.SIGKILL)
        first.proc.kill()
        first.proc.wait(timeout=20)
    time.sleep(0.5)
    second = start_server(data_dir)
    try:
        # A page opens the notebook: the server's kernel manager starts (at first use, see
        # server/deps.py), cuts the log file to what the database has and closes the run.
        page = Viewer(second.url)
        assert page.command("join", notebook_id=nb["id"])["ok"]
        page.wait_status(run_id, "interrupted", timeout=30)
        page.close()
        code, run = http(second, "GET", f"/api/runs/{run_id}")
        assert code == 200 and run["status"] == "interrupted", run
        error = [e for e in run["events"] if e["type"] == "error"]
        assert error and "server stopped" in error[0]["message"]
        store = second.store()
        rows = store.outputs_since(run_id)
        rel = store.log_file_of(run_id)
        assert rel is not None
        path = data_dir / rel
        # Whole gzip members only (repaired), readable by any gzip reader, and the download is it.
        text = gzip.decompress(path.read_bytes()).decode()
        assert text == b"".join(read_log(path.open("rb"))).decode()
        with urllib.request.urlopen(f"{second.url}/api/runs/{run_id}/log", timeout=120) as resp:
            assert resp.read().decode() == text
        assert len(text) > 2000 * 4096 * 0.9 and set(text) == {"x", "\n"}
        # The stored head is the file's start and the stored tail its end, to the chunk.
        seqs = [r.seq for r in rows]
        gap = next(i for i in range(1, len(seqs)) if seqs[i] != seqs[i - 1] + 1)
        head, tail = rows[:gap], rows[gap:]
        assert text.startswith("".join(r.text for r in head)) and text.endswith("".join(r.text for r in tail))
        stored = store.get_run(run_id)
        assert stored.output_bytes == len(text.encode())
        store.close()
    finally:
        second.stop()
