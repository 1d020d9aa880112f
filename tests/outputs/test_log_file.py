"""Log files and what the database keeps: gzip members per batch, truncation, repair, head/tail rows, images."""
from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Any

import pytest

from console.outputs.batcher import NotebookLocks, OutputBatcher
from console.outputs.inline import plan
from console.outputs.keeper import RunKeeper
from console.outputs.live import ViewerLog
from console.outputs.logfile import LogFolder, LogRenderer, read_log, relative_path
from console.outputs.replay import full_log, repair_unfinished
from console.outputs.view import gaps, view_run
from console.store import Store
from console.wire.browser import OutputEvent


def ev(text: str, seq: int, source: str = "driver", stream: str = "stdout") -> OutputEvent:
    return OutputEvent(text=text, source=source, stream=stream, notebook_id="nb", cell_id="c", run_id="r", seq=seq)


def test_members_read_back_as_the_rendered_log_by_us_and_by_gzip(tmp_path: Path) -> None:
    logs = LogFolder(tmp_path)
    w = logs.writer("nb", "r")
    path = tmp_path / w.rel
    w.write([ev("a\nhalf", 1), ev("line\n", 2, source="Worker pid=7")], 2)
    w.write([ev("\rredrawn\n", 3), ev("é✓\n", 4)], 4)
    w.close()
    text = "a\nhalf\n(Worker pid=7) line\nredrawn\né✓\n"
    assert b"".join(read_log(logs.open(w.rel))).decode() == text  # type: ignore[arg-type]
    assert gzip.decompress(path.read_bytes()).decode() == text  # a standard multi-member gzip file


def test_a_cut_file_reads_to_its_last_whole_member_and_repair_trims_what_the_store_lacks(tmp_path: Path) -> None:
    logs = LogFolder(tmp_path)
    w = logs.writer("nb", "r")
    path, rel = tmp_path / w.rel, w.rel
    batches = [f"batch {n} " * 2000 + "\n" for n in range(3)]
    sizes = []
    for n, text in enumerate(batches, 1):
        w.write([ev(text, n)], n)
        sizes.append(path.stat().st_size)
    w.close()
    # Killed while writing the third member: its first half reached the disk.
    cut = sizes[1] + (sizes[2] - sizes[1]) // 2
    path.write_bytes(path.read_bytes()[:cut])
    with pytest.raises(EOFError):
        gzip.decompress(path.read_bytes())
    assert b"".join(read_log(path.open("rb"))).decode().startswith(batches[0] + batches[1])
    # The store has batch 1 and 2 (seq 2): the partial third member goes, the file is whole again.
    assert logs.repair(rel, 2) == cut - sizes[1]
    assert gzip.decompress(path.read_bytes()).decode() == batches[0] + batches[1]
    # A whole member the store never recorded goes too.
    assert logs.repair(rel, 1) == sizes[1] - sizes[0] and b"".join(read_log(path.open("rb"))).decode() == batches[0]
    assert logs.repair(rel, 1) == 0


def test_renderer_matches_the_download_of_stored_rows() -> None:
    chunks = [ev("x", 1), ev("y\n", 2, source="A"), ev("\rz", 3, source="A"), ev("\rw\n", 4, source="A"),
              ev("QUJD", 5, stream="image")]
    assert LogRenderer().render(chunks) == "x\n(A) y\n(A) z\r(A) w\n[image/png, 4 bytes of base64]\n"


@pytest.mark.parametrize("seed", range(40))
def test_the_kept_rows_are_what_the_plan_shows_of_the_whole_output(seed: int) -> None:
    rnd = random.Random(seed)
    budget = rnd.choice([100, 1000, 4096])
    sizes = [rnd.choice([1, 10, 60, 300, 2000]) for _ in range(rnd.randint(1, 120))]
    keeper = RunKeeper(budget)
    rows: dict[int, int] = {}
    hidden = 0
    seq = 0
    while seq < len(sizes):  # in batches of random length, as the batcher flushes them
        batch = [ev("x" * sizes[s - 1], s) for s in range(seq + 1, min(len(sizes), seq + rnd.randint(1, 9)) + 1)]
        seq = batch[-1].seq
        keep = keeper.batch(batch)
        if keep.drop:
            rows = {s: n for s, n in rows.items() if not keep.drop[0] <= s <= keep.drop[1]}
        rows.update({c.seq: len(c.text) for c in keep.store})
        hidden += keep.hidden_bytes
    whole = plan(list(enumerate(sizes, 1)), budget)
    assert sorted(rows) == whole.head + whole.tail
    assert hidden == whole.hidden_bytes and sum(rows.values()) + hidden == sum(sizes)
    # And the stored rows, with their gap, plan to the same head, hidden middle and tail.
    stored = plan(sorted(rows.items()), budget, gaps(sorted(rows.items()), 0, hidden))
    assert (stored.head, stored.tail, stored.hidden_bytes, stored.hidden_seqs) == (
        whole.head, whole.tail, whole.hidden_bytes, whole.hidden_seqs)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = Store(f"sqlite:///{tmp_path / 'console.db'}")
    yield s
    s.close()


def _batcher(store: Store, data_dir: Path, budget: int) -> tuple[OutputBatcher, list[Any]]:
    published: list[Any] = []
    b = OutputBatcher(store, lambda nb, events: published.extend(events), NotebookLocks(),
                      data_dir=data_dir, inline_bytes=budget)
    return b, published


def test_a_big_run_keeps_head_and_tail_rows_its_file_has_all_and_resume_is_exact(store: Store, tmp_path: Path) -> None:
    nb = store.create_notebook("n", cells=[{"kind": "python", "source": "x"}])
    run = store.create_run(nb.id, nb.cells[0].id, "x")
    b, published = _batcher(store, tmp_path, 10_000)
    b.open_run(run.id, nb.id, nb.cells[0].id)
    lines = [f"line {i} é\n" for i in range(20_000)]
    for n in range(0, len(lines), 1000):  # twenty flushes
        b.add(OutputEvent("".join(lines[n:n + 1000]), notebook_id=nb.id, cell_id=nb.cells[0].id, run_id=run.id))
        b.flush_run(run.id)
    b.close_run(run.id)
    text = "".join(lines)
    # Live, past the budget, the viewer got a growing marker and each new tail, not every chunk.
    live = ViewerLog()
    for e in published:
        live.feed(e.to_wire())
    assert sum(e.type == "output" for e in published) < len(text) // 4096
    # The file has it all; the download reads it from there.
    assert store.log_file_of(run.id) == relative_path(nb.id, run.id)
    assert b"".join(full_log(store, tmp_path, run.id)).decode() == text
    # The rows are the head and tail only, and a fresh view shows exactly them around the marker.
    rows = store.outputs_since(run.id)
    assert sum(len(r.text.encode()) for r in rows) <= 10_000 < len(text.encode())
    stored = store.get_run(run.id)
    assert stored.output_bytes == len(text.encode()) and stored.hidden_bytes == len(text.encode()) - sum(
        len(r.text.encode()) for r in rows)
    view = view_run(store, stored, inline_bytes=10_000, result_rows=10)
    assert view.hidden is not None and [c.seq for c in view.head + view.tail] == [r.seq for r in rows]
    assert (view.hidden.first_seq, view.hidden.last_seq) == (view.head[-1].seq + 1, view.tail[0].seq - 1)
    assert text.startswith("".join(c.text for c in view.head)) and text.endswith("".join(c.text for c in view.tail))
    # The live viewer ends where a page loaded now starts: head, one marker, tail.
    assert live.seqs == [c.seq for c in view.head] + [0] + [c.seq for c in view.tail]
    assert live.text == "".join(c.text for c in view.head + view.tail)
    assert live.hidden_bytes == stored.hidden_bytes
    # Resuming: inside the head, the rest of the head then the marker; inside the tail, exactly the rest.
    mid_head, mid_tail = view.head[len(view.head) // 2].seq, view.tail[len(view.tail) // 2].seq
    again = view_run(store, stored, inline_bytes=10_000, result_rows=10, since=mid_head)
    assert [c.seq for c in again.head] == [c.seq for c in view.head if c.seq > mid_head]
    assert again.hidden is not None and again.hidden.first_seq == view.hidden.first_seq
    late = view_run(store, stored, inline_bytes=10_000, result_rows=10, since=mid_tail)
    assert late.hidden is None and [c.seq for c in late.head] == [c.seq for c in view.tail if c.seq > mid_tail]
    # A viewer that saw part of the middle live gets the marker for the rest of it, then the tail.
    inside = view_run(store, stored, inline_bytes=10_000, result_rows=10, since=view.hidden.first_seq + 3)
    assert inside.head == [] and inside.hidden is not None
    assert (inside.hidden.first_seq, inside.hidden.last_seq) == (view.hidden.first_seq + 4, view.hidden.last_seq)
    assert [c.seq for c in inside.tail] == [c.seq for c in view.tail]


def test_images_are_never_merged_split_or_collapsed_nor_cut_by_the_plan(store: Store, tmp_path: Path) -> None:
    nb = store.create_notebook("n", cells=[{"kind": "python", "source": "x"}])
    run = store.create_run(nb.id, nb.cells[0].id, "x")
    b, published = _batcher(store, tmp_path, 12_000)
    b.open_run(run.id, nb.id, nb.cells[0].id)
    big = "iVBORw0KGgo" + "A\r\bB" * 3000  # 12 kB: over the split size, with what a collapse would eat
    small = "iVBORw0KGgoSMALL"
    ids = {"notebook_id": nb.id, "cell_id": nb.cells[0].id, "run_id": run.id}
    for item in [OutputEvent("before\n", **ids), OutputEvent(big, stream="image", **ids),
                 OutputEvent(small, stream="image", **ids), OutputEvent("after\n", **ids)]:
        b.add(item)
    b.flush_run(run.id)
    images = [e.text for e in published if e.type == "output" and e.stream == "image"]
    # The big one left the tail within its own batch: hidden live whole, as a replay hides it.
    assert images == [small] and any(e.type == "output_hidden" for e in published)
    # More text pushes the big image out of the tail: it is hidden whole, never shown in part.
    for i in range(30):
        b.add(OutputEvent(f"more {i} " * 60 + "\n", **ids))
        b.flush_run(run.id)
    b.close_run(run.id)
    view = view_run(store, store.get_run(run.id), inline_bytes=12_000, result_rows=10)
    shown = [c.text for c in view.head + view.tail if c.stream == "image"]
    assert all(text in (big, small) for text in shown) and big not in shown
    assert view.hidden is not None
    log = b"".join(full_log(store, tmp_path, run.id)).decode()
    assert f"[image/png, {len(big)} bytes of base64]\n" in log


def test_a_starting_server_trims_files_of_runs_left_running(store: Store, tmp_path: Path) -> None:
    nb = store.create_notebook("n", cells=[{"kind": "python", "source": "x"}])
    run = store.create_run(nb.id, nb.cells[0].id, "x", status="running")
    b, _ = _batcher(store, tmp_path, 1000)
    b.open_run(run.id, nb.id, nb.cells[0].id)
    ids = {"notebook_id": nb.id, "cell_id": nb.cells[0].id, "run_id": run.id}
    b.add(OutputEvent("stored\n", **ids))
    b.flush_run(run.id)
    path = tmp_path / relative_path(nb.id, run.id)
    # A batch written to the file, then the server was killed before storing it.
    with open(path, "ab") as fh:
        from console.outputs.logfile import member

        fh.write(member(b"never stored\n", 2))
    assert repair_unfinished(store, tmp_path) == 1
    assert store.fail_unfinished_runs() == 1
    assert gzip.decompress(path.read_bytes()) == b"stored\n"
    assert store.get_run(run.id).status == "interrupted" and "server stopped" in store.get_run(run.id).error["message"]
