"""Partitions of a cell's input: data-server handles, MLSQL-style row dicts and numpy fast paths.

A DataServer handle names one partition. Inside a Ray job it holds an ObjectRef to an Arrow
table in the object store (the cell's worker process put it there and owns it while the cell
runs); without Ray it holds the table itself. `.host/.port/.timezone` are kept for pyjava
compatibility: the port is an identifier, nothing listens on it.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pyarrow as pa

ROWS_PER_BATCH = 1000  # what MLSQL's data servers sent per Arrow batch
FILE_COLUMNS = ["start", "offset", "value"]

# Handles made in this process, so parse_servers("host:port") finds the real partition.
_REGISTRY: dict[tuple[str, int], "DataServer"] = {}


class DataServer:
    """One partition of a table: picklable, usable in the driver and in any Ray actor."""

    def __init__(self, host: str, port: int, timezone: str = "", ref: Any = None,
                 table: pa.Table | None = None, num_rows: int | None = None) -> None:
        self.host = host
        self.port = int(port)
        self.timezone = timezone
        self.ref = ref
        self.table = table
        self.num_rows = num_rows

    def __repr__(self) -> str:
        return f"DataServer({self.host}:{self.port}, rows={self.num_rows})"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    def register(self) -> "DataServer":
        _REGISTRY[(self.host, self.port)] = self
        return self

    def arrow(self) -> pa.Table:
        """This partition as an Arrow table (zero-copy out of the object store under Ray)."""
        if self.table is not None:
            return self.table
        if self.ref is not None:
            import ray

            return ray.get(self.ref)
        known = _REGISTRY.get((self.host, self.port))
        if known is not None and known is not self:
            return known.arrow()
        raise LookupError(f"data server {self} is not known here; use the handles from data_servers() "
                          "or context.conf['modelServers']")


def resolve(host: str, port: int, timezone: str = "") -> DataServer:
    return _REGISTRY.get((host, int(port))) or DataServer(host, port, timezone)


def clear_registry() -> None:
    _REGISTRY.clear()


def is_file_table(table: pa.Table) -> bool:
    """MLSQL's file table: exactly start, offset, value(binary); it is served as one partition."""
    if table.column_names != FILE_COLUMNS:
        return False
    typ = table.schema.field("value").type
    return pa.types.is_binary(typ) or pa.types.is_large_binary(typ)


def split(table: pa.Table, n: int) -> list[pa.Table]:
    """n slices of nearly equal size (zero-copy); a file table stays whole and sorted by start."""
    if is_file_table(table):
        return [table.sort_by("start")]
    n = max(1, min(n, table.num_rows or 1))
    size, extra = divmod(table.num_rows, n)
    parts, offset = [], 0
    for i in range(n):
        length = size + (1 if i < extra else 0)
        parts.append(table.slice(offset, length))
        offset += length
    return parts


def rows(table: pa.Table) -> Iterator[dict[str, Any]]:
    """Row dicts as MLSQL made them: list columns as numpy arrays, binary as bytes, struct as dict."""
    for batch in table.to_batches(max_chunksize=ROWS_PER_BATCH):
        if batch.num_rows:
            yield from batch.to_pandas().to_dict("records")


def pandas_batches(table: pa.Table) -> Iterator[Any]:
    for batch in table.to_batches(max_chunksize=ROWS_PER_BATCH):
        yield batch.to_pandas()


def column_numpy(table: pa.Table, column: str | int) -> np.ndarray:
    """A column as numpy without a row loop: a list column of equal lengths becomes 2-D.

    Zero-copy (a read-only view) when the column is one null-free chunk.
    """
    col = table.column(column)
    arr = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    if isinstance(arr, pa.ChunkedArray):  # an empty table
        arr = pa.array([], type=col.type)
    if pa.types.is_fixed_size_list(arr.type):
        return arr.flatten().to_numpy(zero_copy_only=False).reshape(len(arr), arr.type.list_size)
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        n = len(arr)
        if arr.null_count:
            raise ValueError(f"column {column!r} has null lists; use collect_from for row dicts")
        offsets = arr.offsets.to_numpy()
        widths = np.diff(offsets)
        if n and (widths != widths[0]).any():
            raise ValueError(f"column {column!r} has lists of different lengths; use collect_from")
        values = arr.flatten().to_numpy(zero_copy_only=False)
        return values.reshape(n, int(widths[0]) if n else 0)
    return arr.to_numpy(zero_copy_only=False)
