"""console/server/live/yjs_wire.py against pycrdt's own encodings, and against bytes that are not Yjs."""
from __future__ import annotations

import random

import pytest
from pycrdt import Array, Awareness, Doc, Map, Text

from console.server.live.yjs_wire import ITEM_BYTES, read_awareness, update_items, update_weight, write_awareness


def test_items_are_counted_as_yrs_holds_them() -> None:
    doc: Doc = Doc()
    cells: Array = doc.get("cells", type=Array)  # type: ignore[type-arg]
    with doc.transaction():
        cells.append(Map({"id": "a", "kind": "mlsql", "source": Text("hello"), "n": [1, 2.5, {"x": None}]}))
    assert update_items(doc.get_update()) >= 5
    sent: list[bytes] = []
    doc.observe(lambda e: sent.append(e.update))
    text = cells[0]["source"]
    with doc.transaction():
        for _ in range(1000):
            text.insert(0, "ab")  # each insert at the front is an item of its own
    assert update_items(sent[-1]) == 1000
    assert update_weight(sent[-1]) == len(sent[-1]) + 1000 * ITEM_BYTES
    limit = len(sent[-1]) + 10 * ITEM_BYTES  # counting stops past a limit, still reporting past it
    assert limit < update_weight(sent[-1], limit) < update_weight(sent[-1])
    paste: Doc = Doc()
    paste.get("t", type=Text).insert(0, "y" * 100_000)
    assert update_items(paste.get_update()) == 1  # one pasted text is one item, whatever its length


def test_bytes_that_are_not_an_update_are_a_value_error() -> None:
    rng = random.Random(21)
    real = Doc()
    real.get("t", type=Text).insert(0, "text")
    good = real.get_update()
    for n in range(2000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        if n % 2:  # a real update with bytes flipped or cut
            data = bytearray(good)
            data[rng.randrange(len(data))] = rng.randrange(256)
            data = bytes(data[:rng.randrange(1, len(data) + 1)])
        for reader in (update_items, read_awareness):
            try:
                reader(data)
            except ValueError:
                pass


def test_awareness_round_trips_with_pycrdt() -> None:
    doc: Doc = Doc()
    awareness = Awareness(doc)
    awareness.set_local_state({"user": {"name": "ada", "color": "#1971c2"}, "cell": "c1"})
    update = awareness.encode_awareness_update([doc.client_id])
    ((client, clock, state),) = read_awareness(update)
    assert client == doc.client_id and state == {"user": {"name": "ada", "color": "#1971c2"}, "cell": "c1"}
    other = Awareness(Doc())
    other.apply_awareness_update(write_awareness([(client, clock + 1, {**state, "user": {"name": "x", "id": 1}})]), "t")
    assert other.states[client]["user"] == {"name": "x", "id": 1}
    with pytest.raises(ValueError):
        read_awareness(write_awareness([(1, 1, {"a": 1})]) + b"\x00")
    deep = ("[" * 60_000).encode()
    with pytest.raises(ValueError, match="nested too deep"):
        read_awareness(b"\x01\x01\x01" + bytes([0x80 | (len(deep) & 0x7F), (len(deep) >> 7) & 0x7F | 0x80,
                                                 len(deep) >> 14]) + deep)
