"""The stored-run view on a real store: what a viewer is shown of a run, as data and as events."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.outputs.replay import notebook_events
from console.outputs.view import latest_views, log_url, view_run
from console.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path / 'console.db'}")
    yield s
    s.close()


@pytest.fixture
def nb(store: Store) -> Any:
    return store.create_notebook("n", cells=[{"kind": "mlsql", "source": "a"}, {"kind": "python", "source": "b"}])


def test_big_output_is_head_hidden_tail_in_bytes(store: Store, nb: Any) -> None:
    run = store.create_run(nb.id, nb.cells[0].id, "a")
    store.append_output(run.id, [{"seq": i, "text": f"{i:03d}é\n"} for i in range(1, 101)])  # 6 bytes, 5 chars
    view = view_run(store, store.get_run(run.id), inline_bytes=60, result_rows=100)
    assert [c.seq for c in view.head] == [1, 2, 3, 4, 5] and [c.seq for c in view.tail] == [96, 97, 98, 99, 100]
    assert view.hidden is not None
    assert (view.hidden.first_seq, view.hidden.last_seq, view.hidden.hidden_bytes) == (6, 95, 90 * 6)
    assert view.hidden.log_url == log_url(run.id)
    whole = view_run(store, store.get_run(run.id), inline_bytes=600, result_rows=100)
    assert len(whole.head) == 100 and whole.hidden is None and whole.tail == []
    # A reconnecting viewer that has up to seq 97 is sent the rest, whole.
    after = view_run(store, store.get_run(run.id), inline_bytes=60, result_rows=100, since=97)
    assert [c.seq for c in after.head] == [98, 99, 100] and after.hidden is None


def test_events_are_status_output_metrics_then_result(store: Store, nb: Any) -> None:
    run = store.create_run(nb.id, nb.cells[0].id, "a")
    store.append_output(run.id, [{"seq": i, "text": "x" * 10} for i in range(1, 11)])
    store.append_metrics(run.id, [{"seq": 1, "values": {"loss": 0.5}, "step": 1}])
    store.finish_run(run.id, "done", result={"type": "result", "name": "t", "columns": [{"name": "a", "type": "int"}],
                                             "rows": [[i] for i in range(5)], "total_rows": 5})
    view = view_run(store, store.get_run(run.id), inline_bytes=40, result_rows=3)
    kinds = [e.type for e in view.events()]
    assert kinds == ["cell_status", "output", "output", "output_hidden", "output", "output", "metrics", "result"]
    # RESULT_ROWS holds for stored results too; the total still says how many there were.
    assert view.result is not None and view.result.rows == [[0], [1], [2]] and view.result.total_rows == 5
    assert {(e.notebook_id, e.cell_id, e.run_id) for e in view.events()} == {(nb.id, nb.cells[0].id, run.id)}


def test_a_run_the_server_left_unfinished_still_shows(store: Store, nb: Any) -> None:
    run = store.create_run(nb.id, nb.cells[1].id, "b", status="running")
    assert store.fail_unfinished_runs() == 1  # stores an error without a type or ids
    view = view_run(store, store.get_run(run.id), inline_bytes=100, result_rows=100)
    assert view.error is not None and view.error.kind == "kernel" and view.error.run_id == run.id
    assert view.events()[-1].type == "error"


def test_latest_views_oldest_first_and_replay_is_their_events(store: Store, nb: Any) -> None:
    first = store.create_run(nb.id, nb.cells[1].id, "b")
    store.append_output(first.id, [{"seq": 1, "text": "old\n"}])
    second = store.create_run(nb.id, nb.cells[0].id, "a")
    store.append_output(second.id, [{"seq": 1, "text": "one\n"}, {"seq": 2, "text": "two\n"}])
    views = latest_views(store, nb.id, inline_bytes=100, result_rows=100, since={second.id: 1})
    assert list(views) == [nb.cells[1].id, nb.cells[0].id]
    assert [c.text for c in views[nb.cells[0].id].head] == ["two\n"]
    events = notebook_events(store, nb.id, {second.id: 1}, {}, inline_bytes=100, result_rows=100)
    assert events == [e for v in views.values() for e in v.events()]
