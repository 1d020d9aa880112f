"""The co-edited notebook as a document, without rooms, sockets, saving or time (console/server/live/coedit.py
holds those): a root Array "cells" of Map {id, kind, source: Text}, read back as (id, kind, source)
tuples, and the store's changes folded in with the smallest edits, so a cursor or a concurrent
edit elsewhere keeps its place. Pure functions over pycrdt values: tests drive them alone.
"""
from __future__ import annotations

from typing import Any

from pycrdt import Array, Map, Text

from console.store import valid_cell_id

KINDS = ("mlsql", "python", "markdown")
CellTuple = tuple[str, str, str]  # (id, kind, source)


def _utf8_index(text: str, index: int) -> int:
    # pycrdt's Text counts UTF-8 bytes; Python strings count code points.
    return len(text[:index].encode("utf-8"))


def replace_text(ytext: Text, old: str, new: str) -> None:
    """Turn `ytext` (holding `old`) into `new` by replacing only the part that differs, so a cursor
    or a concurrent edit elsewhere in the text keeps its place."""
    if old == new:
        return
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    a, b = _utf8_index(old, start), _utf8_index(old, end_old)
    if b > a:
        del ytext[a:b]
    if end_new > start:
        ytext.insert(a, new[start:end_new])


def cell_map(cell_id: str, kind: str, source: str) -> Map:
    return Map({"id": cell_id, "kind": kind, "source": Text(source)})


def read_cells(cells: Array) -> list[CellTuple]:
    """The document's cells as (id, kind, source); entries a page made malformed are skipped
    (a bad id, an id seen twice, a non-map), a kind other than the three becomes mlsql."""
    out: list[CellTuple] = []
    seen: set[str] = set()
    for item in cells:
        if not isinstance(item, Map):
            continue
        cid, kind, source = item.get("id"), item.get("kind"), item.get("source")
        if not isinstance(cid, str) or not valid_cell_id(cid) or cid in seen:
            continue
        seen.add(cid)
        out.append((cid, kind if kind in KINDS else "mlsql", str(source) if isinstance(source, Text) else ""))
    return out


def _index_of(cells: Array, cell_id: str) -> int:
    for i, item in enumerate(cells):
        if isinstance(item, Map) and item.get("id") == cell_id:
            return i
    return -1


def apply_store_changes(cells: Array, saved: list[CellTuple], stored: list[CellTuple]) -> None:
    """Fold what the store changed since `saved` into the document (call inside a transaction).

    Cells the store deleted go, cells it added come in after their stored predecessor, changed
    kinds and sources are set (the store wins for a cell both sides changed), and cells the store
    reordered are moved; cells added on the document side and not yet stored stay where they are.
    """
    before = {c[0]: c for c in saved}
    after = {c[0]: c for c in stored}
    for cid in [c for c in before if c not in after]:
        i = _index_of(cells, cid)
        if i >= 0:
            del cells[i]
    for pos, (cid, kind, source) in enumerate(stored):
        i = _index_of(cells, cid)
        if i < 0:
            prev = _index_of(cells, stored[pos - 1][0]) if pos else -1
            cells.insert(prev + 1, cell_map(cid, kind, source))
            continue
        item = cells[i]
        old = before.get(cid)
        if old is None or old[1] != kind:
            item["kind"] = kind
        text = item.get("source")
        if not isinstance(text, Text):
            item["source"] = Text(source)
        elif old is None or old[2] != source:
            replace_text(text, str(text), source)
    # Order: the stored order for stored cells; a document-only cell keeps its predecessor.
    doc_ids = [_id_of(item) for item in cells]
    stored_ids = [c[0] for c in stored]
    if [i for i in doc_ids if i in after] == stored_ids:
        return
    target: list[str | None] = list(stored_ids)
    for k, extra in enumerate(doc_ids):
        if extra in after:
            continue
        lead = next((doc_ids[j] for j in range(k - 1, -1, -1) if doc_ids[j] in target), None)
        target.insert(target.index(lead) + 1 if lead is not None else 0, extra)
    for pos, want in enumerate(target):
        i = next(j for j in range(pos, len(cells)) if _id_of(cells[j]) == want)
        if i != pos:
            moved = cells[i]
            mkind = moved.get("kind") if isinstance(moved, Map) else "mlsql"
            mtext = moved.get("source") if isinstance(moved, Map) else None
            msource = str(mtext) if mtext is not None else ""  # read before the delete empties it
            del cells[i]
            cells.insert(pos, cell_map(str(want), mkind if mkind in KINDS else "mlsql", msource))


def _id_of(item: Any) -> str | None:
    cid = item.get("id") if isinstance(item, Map) else None
    return cid if isinstance(cid, str) else None


def source_digest(text: str) -> str:
    """FNV-1a (32 bits) of the UTF-8 text, as 8 hex digits: frontend/src/coedit.js computes the same."""
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"
