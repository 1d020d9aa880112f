"""Direct reads: partitions of a loaded table as row ranges of its parquet row groups.

The kernel names the fragments (console/kernel/origins.py) in the job's conf under FRAGMENTS_KEY;
the worker splits them into the same row ranges data.split() would cut from the table, so a
cell sees the same partitions either way, and each actor reads only the row groups of its own
partition with pyarrow. The kernel's table is never copied.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

FRAGMENTS_KEY = "_inputFragments"  # popped from conf by the worker: never seen by the cell
Fragment = tuple[str, int, int]  # parquet file, row group, rows in it
Piece = tuple[str, int, int, int]  # parquet file, row group, first row in it, rows


@dataclass
class Fragments:
    """What the kernel sent: the table's schema and its fragments in table order."""

    schema: pa.Schema
    fragments: list[Fragment]
    source: str  # e.g. "delta /lake/default/t at version 3", for messages
    # The files are on storage every node sees at the same path (a cluster SQL result in the lake,
    # written there by the cluster itself): actors on any node may read them.
    shared: bool = False

    @property
    def num_rows(self) -> int:
        return sum(f[2] for f in self.fragments)

    def split(self, n: int) -> list[list[Piece]]:
        """n partitions of nearly equal rows, cut exactly where data.split cuts the table."""
        total = self.num_rows
        n = max(1, min(n, total or 1))
        size, extra = divmod(total, n)
        bounds, start = [], 0
        for i in range(n):
            end = start + size + (1 if i < extra else 0)
            bounds.append((start, end))
            start = end
        parts: list[list[Piece]] = []
        for lo, hi in bounds:
            pieces: list[Piece] = []
            at = 0
            for path, group, rows in self.fragments:
                first, last = max(lo, at), min(hi, at + rows)
                if first < last:
                    pieces.append((path, group, first - at, last - first))
                at += rows
            parts.append(pieces)
        return parts

    def read_all(self) -> pa.Table:
        return read_pieces([(p, g, 0, r) for p, g, r in self.fragments], self.schema)


def parse(value: str | None) -> Fragments | None:
    if not value:
        return None
    doc = json.loads(value)
    schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(doc["schema"])))
    where = f"{doc.get('format', '')} {doc.get('path', '')}".strip()
    if doc.get("version") is not None:
        where += f" at version {doc['version']}"
    return Fragments(schema, [(str(p), int(g), int(r)) for p, g, r in doc["fragments"]], where,
                     bool(doc.get("shared")))


def read_pieces(pieces: list[Piece], schema: pa.Schema, source: str = "") -> pa.Table:
    """The rows the pieces name, as one table of `schema` (one row group read per piece)."""
    import pyarrow.parquet as pq

    tables = []
    files: dict[str, Any] = {}
    for path, group, first, rows in pieces:
        try:
            file = files.get(path) or files.setdefault(path, pq.ParquetFile(path))
        except FileNotFoundError:
            raise FileNotFoundError(f"direct read of {source or 'the input table'}: {path} is gone "
                                    "(removed or vacuumed since the load?); run the load again") from None
        part = file.read_row_group(group)
        if first or rows != part.num_rows:
            part = part.slice(first, rows)
        tables.append(part.cast(schema) if part.schema != schema else part)
    if not tables:
        return schema.empty_table()
    table = pa.concat_tables(tables)
    return table.replace_schema_metadata(schema.metadata)
