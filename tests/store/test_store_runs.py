"""Runs and their numbered output chunks and metric points; the latest run of each cell."""
from __future__ import annotations

import time

import pytest

from console.store import Exists, Invalid, NotFound, Store
from console.wire.browser import MetricsEvent, OutputEvent


@pytest.fixture
def nb(store: Store):  # type: ignore[no-untyped-def]
    return store.create_notebook("n", cells=[{"kind": "mlsql", "source": "a"}, {"kind": "python", "source": "b"}])


def test_run_lifecycle_and_outputs(store: Store, nb, user) -> None:
    cid = nb.cells[0].id
    run = store.create_run(nb.id, cid, "a", user_id=user.id)
    assert run.status == "queued" and run.output_bytes == 0
    assert store.set_run_status(run.id, "running").status == "running"
    total = store.append_output(run.id, [
        {"seq": 1, "text": "héllo\n"},
        OutputEvent(text="(Network pid=7) epoch 1\n", source="Network pid=7", seq=2),
    ])
    assert total == len("héllo\n".encode()) + len("(Network pid=7) epoch 1\n")
    store.append_output(run.id, [{"seq": 3, "text": "x", "stream": "stderr", "ts": 12.5}], hidden_bytes=100)
    got = store.outputs_since(run.id, 1)
    assert [(o.seq, o.source, o.stream) for o in got] == [(2, "Network pid=7", "stdout"), (3, "driver", "stderr")]
    assert got[1].ts == 12.5 and store.last_output_seq(run.id) == 3
    done = store.finish_run(run.id, "done", result={"name": "t", "rows": [[1]]})
    assert done.status == "done" and done.finished_at is not None and done.hidden_bytes == 100
    assert store.get_run(run.id, with_outputs=True).outputs[0].text == "héllo\n"


def test_duplicate_seq_writes_nothing(store: Store, nb) -> None:
    run = store.create_run(nb.id, nb.cells[0].id, "a")
    store.append_output(run.id, [{"seq": 1, "text": "a"}])
    with pytest.raises(Exists):
        store.append_output(run.id, [{"seq": 2, "text": "b"}, {"seq": 1, "text": "again"}])
    assert [o.text for o in store.outputs_since(run.id)] == ["a"]
    assert store.get_run(run.id).output_bytes == 1
    with pytest.raises(Invalid):
        store.append_output(run.id, [{"seq": 0, "text": "x"}])
    with pytest.raises(NotFound):
        store.append_output("nope", [{"seq": 1, "text": "x"}])


def test_latest_runs_per_cell(store: Store, nb) -> None:
    a, b = nb.cells[0].id, nb.cells[1].id
    old = store.create_run(nb.id, a, "a")
    store.append_output(old.id, [{"seq": 1, "text": "old"}])
    store.finish_run(old.id, "error", error={"kind": "sql", "message": "boom", "line": 1})
    time.sleep(0.01)
    new = store.create_run(nb.id, a, "a")
    store.append_output(new.id, [{"seq": 1, "text": "new"}])
    store.append_metrics(new.id, [MetricsEvent(values={"loss": 0.5}, step=1, seq=1),
                                  {"seq": 2, "values": {"loss": 0.4}}])
    only_b = store.create_run(nb.id, b, "b")
    store.finish_run(only_b.id, "error", error={"kind": "python", "message": "bad"})
    latest = store.latest_runs(nb.id)
    assert set(latest) == {a, b}
    assert latest[a].id == new.id and [o.text for o in latest[a].outputs] == ["new"]
    assert [m.values["loss"] for m in latest[a].metrics] == [0.5, 0.4] and latest[a].metrics[0].step == 1
    assert latest[b].error == {"kind": "python", "message": "bad"}
    assert store.latest_runs(nb.id, with_outputs=False)[a].outputs is None
    assert store.metrics_for(new.id, since=1)[0].values == {"loss": 0.4}


def test_fail_unfinished_runs(store: Store, nb) -> None:
    r1 = store.create_run(nb.id, nb.cells[0].id, "a", status="running")
    r2 = store.create_run(nb.id, nb.cells[1].id, "b")
    store.finish_run(r2.id, "done")
    assert store.fail_unfinished_runs() == 1
    assert store.get_run(r1.id).status == "interrupted" and store.get_run(r2.id).status == "done"


def test_run_errors(store: Store, nb) -> None:
    with pytest.raises(NotFound):
        store.create_run("nope", "c", "x")
    run = store.create_run(nb.id, nb.cells[0].id, "a")
    with pytest.raises(Invalid):
        store.finish_run(run.id, "running")
    with pytest.raises(Invalid):
        store.append_metrics(run.id, [{"seq": 1, "values": [1, 2]}])


def test_output_sizes_are_utf8_bytes_and_ranges_read_only_what_is_asked(store: Store, nb) -> None:
    run = store.create_run(nb.id, nb.cells[0].id, "a")
    texts = ["plain\n", "héllo wörld\n", "数据\n", "🙂\r🙃\n"]
    store.append_output(run.id, [{"seq": i, "text": t} for i, t in enumerate(texts, 1)])
    # The database counts them, in bytes (what the inline budget is in), not in characters.
    assert store.output_sizes(run.id) == [(i, len(t.encode("utf-8"))) for i, t in enumerate(texts, 1)]
    assert store.output_sizes(run.id, since=2) == [(3, 7), (4, 10)]
    assert [o.text for o in store.outputs_between(run.id, 2, 3)] == texts[1:3]
    assert [o.seq for o in store.iter_outputs(run.id, page=3)] == [1, 2, 3, 4]
    assert store.output_sizes("nope") == [] and list(store.iter_outputs("nope")) == []


def test_list_runs_is_the_history_oldest_first(store: Store, nb, user) -> None:
    c = nb.cells[0].id
    first = store.create_run(nb.id, c, "select 1 as a;", user.id)
    second = store.create_run(nb.id, c, "select 2 as a;")
    store.finish_run(first.id, "done")
    runs = store.list_runs(nb.id)
    assert [r.id for r in runs] == [first.id, second.id]
    assert [r.status for r in runs] == ["done", "queued"] and runs[0].user_id == user.id
    other = store.create_notebook("other")
    assert store.list_runs(other.id) == []
