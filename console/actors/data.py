"""Partitions of a cell's input: data-server handles, MLSQL-style row dicts and numpy fast paths.

A DataServer handle names one partition. Under Ray it names rows [offset, offset+num_rows) of
the Arrow IPC file the kernel wrote on /dev/shm, plus the node that file is on: an actor on that
node memory-maps the file and gets the partition with no copy at all. When the cluster has other
nodes (or the worker is a Ray Client) the worker also puts the partition into the object store,
and actors elsewhere read that ObjectRef: one copy of the slice's own bytes (Ray's Arrow
serializer cuts a slice's buffers to the slice; pyarrow's pickle alone would store the parent's
whole buffers), read back zero-copy. A handle may instead name row ranges of the parquet row
groups a `load` read (fragments.py): the actor reads them itself. Without Ray the handle holds
the table itself.
`.host/.port/.timezone` are kept for pyjava compatibility: the port is an identifier, nothing
listens on it.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Iterator

import numpy as np
import pyarrow as pa

from console.actors.fragments import Fragments, Piece, read_pieces

ROWS_PER_BATCH = 1000  # what MLSQL's data servers sent per Arrow batch
FILE_COLUMNS = ["start", "offset", "value"]

# Handles made in this process, so parse_servers("host:port") finds the real partition.
_REGISTRY: dict[tuple[str, int], "DataServer"] = {}
# IPC files this process memory-mapped, by path: an actor holding several partitions of one
# file maps it once. Cleared with the registry when a cell ends.
_MAPPED: dict[str, pa.Table] = {}


class DataServer:
    """One partition of a table: picklable, usable in the driver and in any Ray actor."""

    def __init__(self, host: str, port: int, timezone: str = "", ref: Any = None,
                 table: pa.Table | None = None, num_rows: int | None = None, *,
                 path: str | None = None, offset: int = 0, node_id: str | None = None,
                 local: pa.Table | None = None, pieces: list[Piece] | None = None,
                 schema: pa.Schema | None = None, source: str = "") -> None:
        self.host = host
        self.port = int(port)
        self.timezone = timezone
        self.ref = ref
        self.table = table
        self.num_rows = num_rows
        self.path = path  # the kernel's IPC file holding the whole table, on node `node_id`
        self.offset = offset
        self.node_id = node_id
        self._local = local  # the partition in the process that made the handle; never pickled
        self.pieces = pieces  # direct read: row ranges of the loaded table's parquet row groups
        self.schema = schema
        self.source = source

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_local"] = None  # a receiver maps the file or reads the ObjectRef instead
        return state

    def __repr__(self) -> str:
        return f"DataServer({self.host}:{self.port}, rows={self.num_rows})"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    def register(self) -> "DataServer":
        _REGISTRY[(self.host, self.port)] = self
        return self

    def arrow(self) -> pa.Table:
        """This partition as an Arrow table: zero-copy from the node's IPC file or the object store."""
        if self._local is not None:
            return self._local
        if self.table is not None:
            return self.table
        if self.pieces is not None and self.schema is not None:
            self._local = read_pieces(self.pieces, self.schema, self.source)  # read once per handle
            return self._local
        if self.path is not None and self.node_id is not None and self.node_id == _node_id():
            mapped = _map(self.path)
            if mapped is not None:
                return mapped.slice(self.offset, self.num_rows)
        if self.ref is not None:
            import ray

            return ray.get(self.ref)  # zero-copy: a view of the store's memory on this node
        known = _REGISTRY.get((self.host, self.port))
        if known is not None and known is not self:
            return known.arrow()
        if self.path is not None:
            raise LookupError(self._unreachable())
        raise LookupError(f"data server {self} is not known here; use the handles from data_servers() "
                          "or context.conf['modelServers']")


    def _unreachable(self) -> str:
        """Why this partition cannot be read here, and what to do; no paths of the server's."""
        here = _node_id()
        written = f"written on Ray node {_short(self.node_id)}"
        if here is not None and here != self.node_id:
            return (f"data server {self}: its partition was {written} and is read on node {_short(here)}, "
                    "with no object-store copy. The cell decided the cluster had one node when it made its "
                    "data servers; call data_servers() again in the cell that reads them")
        return (f"data server {self}: its partition was {written}, this node, but its hand-off file is gone: "
                "data servers live while the cell that made them runs (an actor kept from an earlier cell "
                "must be given this cell's data_servers())")


def _short(node: str | None) -> str:
    return (node or "?")[:12]


def _node_id() -> str | None:
    """This process's Ray node, or None outside Ray (and for a Ray Client, whose files are elsewhere)."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    try:
        if ray.util.client.ray.is_connected():
            return None
        return ray.get_runtime_context().get_node_id()
    except Exception:
        return None


def _map(path: str) -> pa.Table | None:
    table = _MAPPED.get(path)
    if table is None:
        table = map_locked(path)
        if table is None:
            return None
        _MAPPED[path] = table
    return table


def map_locked(path: str) -> pa.Table | None:
    """The kernel's IPC file as a zero-copy table, or None when that file is gone.

    The mapping holds flock(LOCK_SH) for as long as any buffer of the table lives (Python's mmap
    keeps a duplicate of the descriptor, and the lock belongs to the open file), so the kernel
    never writes another table over pages someone still reads (console/kernel/ipcfiles.py).
    """
    import fcntl
    import mmap

    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits while the kernel is writing this file
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same or os.fstat(fd).st_size == 0:
            return None  # the name became a spare (its table is gone) before we locked it
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)  # the mmap's own descriptor keeps the lock
    return pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()


def resolve(host: str, port: int, timezone: str = "") -> DataServer:
    return _REGISTRY.get((host, int(port))) or DataServer(host, port, timezone)


def clear_registry() -> None:
    _REGISTRY.clear()
    _MAPPED.clear()


def partition_handles(parts: list[pa.Table], first_port: int, timezone: str,
                      path: str | None = None) -> list[DataServer]:
    """Handles for consecutive slices of one table, registered for parse_servers.

    Under Ray (not a Ray Client) with the table in the IPC file `path`, a handle names its slice
    of that file on this node: no copy is made. The object store gets a copy only where an actor
    may run on another node (a cluster of several nodes) or when there is no file to map.
    """
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return [DataServer("127.0.0.1", first_port + i, timezone, table=p, num_rows=p.num_rows).register()
                for i, p in enumerate(parts)]
    host = "127.0.0.1"
    try:
        host = ray.util.get_node_ip_address()
    except Exception:
        pass
    node = _node_id() if path else None
    if node is not None and path is not None and not _other_nodes(ray) and not actors_can_read(ray, path, node):
        node = None  # the object store, the way that works everywhere (said once, by actors_can_read)
    put = node is None or _other_nodes(ray)
    out, offset = [], 0
    for i, part in enumerate(parts):
        out.append(DataServer(host, first_port + i, timezone, ref=ray.put(part) if put else None,
                              num_rows=part.num_rows, path=path if node else None, offset=offset,
                              node_id=node, local=part).register())
        offset += part.num_rows
    return out


def fragment_handles(frags: Fragments, n: int, first_port: int, timezone: str) -> list[DataServer] | None:
    """Handles that make each actor read its own row groups, or None where that cannot work.

    The fragments are paths on the kernel's node. Every actor can open them only when the
    cluster is this one node and this process is not a Ray Client (whose actors run elsewhere),
    or when they are `shared` (on storage every node sees); otherwise the caller reads the table
    and uses the object store.
    """
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    if not frags.shared and (_node_id() is None or _other_nodes(ray)):
        return None
    node = _node_id()
    if not frags.shared and frags.fragments and node is not None and not actors_can_read(
            ray, frags.fragments[0][0], node, "the loaded table's files", "are read by the cell's worker instead"):
        return None
    host = "127.0.0.1"
    try:
        host = ray.util.get_node_ip_address()
    except Exception:
        pass
    return [DataServer(host, first_port + i, timezone, num_rows=sum(p[3] for p in pieces), pieces=pieces,
                       schema=frags.schema, source=frags.source).register()
            for i, pieces in enumerate(frags.split(n))]


# Folders whose files this node's Ray workers were found to read (True) or not (False), by folder.
_REACHABLE: dict[str, bool] = {}
PROBE_TIMEOUT = 60.0  # a fresh Ray worker on a loaded machine may take this long to start


def actors_can_read(ray: Any, path: str, node: str, what: str = "the session's hand-off folder",
                    instead: str = "go through Ray's object store instead (one copy each)") -> bool:
    """Whether Ray's workers on this node can open `path` (the kernel's IPC file, a loaded file).

    The kernel writes where its wall lets it (the session's hand-off folder, or /dev/shm, or a
    private /tmp when neither is writable); whether the Ray zone's workers, which may run as another
    uid in another mount namespace, see that file is a fact of this machine's set-up, asked of a
    real worker once per folder and per worker process rather than assumed. Where they cannot,
    the caller puts partitions into the object store, and the cell's output says so once.
    """
    folder = os.path.dirname(path)
    known = _REACHABLE.get(folder)
    if known is not None:
        return known
    try:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        probe = ray.remote(num_cpus=0, max_retries=0)(_can_read).options(
            name="console.handoff_probe", scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
        ok = bool(ray.get(probe.remote(path), timeout=PROBE_TIMEOUT))
    except Exception as exc:  # a probe that cannot run says nothing good about the file either
        ok = False
        why = f" ({type(exc).__name__})"
    else:
        why = ""
    _REACHABLE[folder] = ok
    if not ok:
        print(f"[console] this node's Ray workers cannot read {what}{why}; the cell's partitions {instead}. "
              "docs/python-runtime.md#how-partitions-reach-actors says which set-ups share them",
              file=sys.stderr)
    return ok


def _can_read(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            f.read(1)
        return True
    except OSError:
        return False


def _other_nodes(ray: Any) -> bool:
    try:
        return sum(1 for n in ray.nodes() if n.get("Alive")) > 1
    except Exception:
        return True  # unknown: keep the copy that works everywhere


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
