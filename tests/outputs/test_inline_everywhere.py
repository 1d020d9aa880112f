"""One inline plan everywhere: a big stored output (multi-byte text, so bytes != characters) shows
the same head, hidden middle and tail on the notebook page's data source (GET .../runs), the
socket replay on join, the run API (GET /api/runs/<id>) and the published page (/p/<token>).

A real server on 127.0.0.1 with a real store; the run's chunks are stored through the store's
own API, as the batcher stores them, so no kernel is needed.
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.clients import Viewer, http, join
from tests.support.live_server import LiveServer

INLINE_BYTES = 1000
RESULT_ROWS = 3
WIDE = "数据" * 10 + " 🙂\n"  # 23 characters, 66 bytes


def _chunk(i: int) -> str:
    return WIDE if i % 3 else f"line {i:03d} ascii\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(str(tmp_path_factory.mktemp("inline-data")), OUTPUT_INLINE_BYTES=INLINE_BYTES,
                      RESULT_ROWS=RESULT_ROWS)
    try:
        yield live
    finally:
        live.close()


@pytest.fixture(scope="module")
def stored(server: LiveServer) -> dict[str, Any]:
    nb = server.notebook("select 1 as a;")
    store = server.store
    run = store.create_run(nb.id, nb.cells[0].id, nb.cells[0].source, status="running")
    store.append_output(run.id, [{"seq": i, "text": _chunk(i)} for i in range(1, 121)])
    store.finish_run(run.id, "done", result={
        "type": "result", "name": "t", "columns": [{"name": "a", "type": "int"}],
        "rows": [[i] for i in range(5)], "total_rows": 5, "notebook_id": nb.id, "cell_id": nb.cells[0].id,
        "run_id": run.id})
    link = store.create_link(nb.id, store.get_user_by_name("admin").id)
    return {"nb": nb, "run_id": run.id, "token": link.token}


def _cut(events: list[dict[str, Any]], run_id: str) -> tuple[list[str], int, list[str]]:
    """(head texts, hidden bytes, tail texts) of one run's events, in the order they came."""
    head: list[str] = []
    tail: list[str] = []
    hidden = 0
    for e in events:
        if e.get("run_id") != run_id:
            continue
        if e["type"] == "output_hidden":
            hidden = e["hidden_bytes"]
        elif e["type"] == "output":
            (tail if hidden else head).append(e["text"])
    return head, hidden, tail


def _expected() -> tuple[list[str], int, list[str]]:
    """What a budget of INLINE_BYTES in UTF-8 bytes keeps: about half of it at each end."""
    texts = [_chunk(i) for i in range(1, 121)]
    sizes = [len(t.encode("utf-8")) for t in texts]
    half = INLINE_BYTES // 2
    n_head = max(k for k in range(1, len(texts)) if sum(sizes[:k]) <= half)
    n_tail = max(k for k in range(1, len(texts)) if sum(sizes[-k:]) <= half)
    # Counted in characters the same budget would have kept more than twice as many lines.
    assert max(k for k in range(1, len(texts)) if sum(map(len, texts[:k])) <= half) > 2 * n_head
    return texts[:n_head], sum(sizes[n_head:-n_tail]), texts[-n_tail:]


def test_page_socket_run_api_and_published_page_show_the_same_head_and_tail(
        server: LiveServer, stored: dict[str, Any]) -> None:
    nb, run_id = stored["nb"], stored["run_id"]
    expected = _expected()

    # The notebook page draws stored output from GET /api/notebooks/<id>/runs.
    code, body = http(server, "GET", f"/api/notebooks/{nb.id}/runs")
    assert code == 200
    page = _cut(body["runs"][nb.cells[0].id]["events"], run_id)

    # A viewer joining the notebook's room is replayed the stored run.
    viewer = Viewer(server.url)
    try:
        join(viewer, nb)
        viewer.wait_for(lambda e: e["type"] == "result" and e["run_id"] == run_id)
        with viewer.cond:
            socket = _cut(list(viewer.events), run_id)
            replayed_result = next(e for e in viewer.events if e["type"] == "result")
    finally:
        viewer.close()

    code, body = http(server, "GET", f"/api/runs/{run_id}")
    assert code == 200
    api = _cut(body["events"], run_id)

    code, published = http(server, "GET", f"/p/{stored['token']}")
    assert code == 200
    pre = re.search(r'<pre class="output">(.*?)</pre>', published, re.S)
    assert pre is not None
    head_html, marker, tail_html = re.split(r'<span class="hidden-output">(.*?)</span>', pre.group(1), flags=re.S)
    hidden_bytes = int(re.search(r"([0-9]+) bytes of output not shown", marker).group(1))  # type: ignore[union-attr]

    assert page == socket == api == expected
    head, hidden, tail = expected
    assert (html.unescape(head_html), hidden_bytes, html.unescape(tail_html)) == ("".join(head), hidden, "".join(tail))
    # The result is cut to RESULT_ROWS alike (the published page used to keep 100 rows).
    assert len(replayed_result["rows"]) == RESULT_ROWS
    assert published.count("<tr><td>") == RESULT_ROWS and f"{RESULT_ROWS} of 5 rows" in published
