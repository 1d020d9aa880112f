"""The session's catalog: names to Arrow tables, where a loaded parquet or delta table stays on disk.

`load parquet.`…` as t` and `load delta.`…` as t` do not read the data. They open a pyarrow
dataset over the files (pinned: the file list, or the delta version, of the moment of the
load), read the footers for the schema and row count, and put a `LazyTable` in the catalog.
The rows are decoded only where they are needed, and only as much as is needed:

- SQL registers the dataset with DuckDB, which scans it with projection and filters pushed
  down (`select label from t` never decodes the images);
- a Python cell streams it batch by batch into the IPC file the actors map, or names its files
  so each actor reads its own part (direct reads, console/kernel/origins.py);
- a result preview decodes its first rows only;
- everything else that wants a `pa.Table` (save, train, !desc …) gets one through the ordinary
  Mapping interface; it is read then, once, and kept.

A loaded file that changes or disappears afterwards is detected (size and modification time,
checked before every scan) and reported with the table's name, instead of mixing two versions.
A save over the folder a lazy table reads first reads that table into memory (`pin_under`).
"""
from __future__ import annotations

import os
import shutil
import weakref
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Union

import pyarrow as pa

from console.sources.base import SourceError

if TYPE_CHECKING:
    import pyarrow.dataset as pads

# Rows per batch when a lazy table is streamed (IPC hand-off, downloads): an MNIST row is 6 kB,
# so a batch is tens of MB, not a whole row group's hundreds.
STREAM_ROWS = 8192
# Files decoded at once while a lazy table streams (at most one per core), and the batches each
# may hold decoded ahead of the reader. One thread decoding 600k MNIST rows took 8 s, the
# kernel path's whole wall in the scale bench; two files at a time on 2 cores, 4.5 s.
READ_AHEAD_FILES = 4
READ_AHEAD_BATCHES = 2


class LazyTable:
    """A loaded table not read yet: a pinned pyarrow dataset with its schema and row count."""

    def __init__(self, dataset: "pads.Dataset", shown: str, num_rows: int | None = None) -> None:
        self._dataset = dataset
        self.shown = shown  # e.g. "parquet /data/mnist", for messages
        self.schema: pa.Schema = dataset.schema
        self._files = [(f, _stamp(f)) for f in _local_paths(dataset)]
        self.num_rows: int = dataset.count_rows() if num_rows is None else num_rows
        self.nbytes: int = _estimated_bytes(dataset)  # decoded size, from the footers
        self._table: pa.Table | None = None

    @property
    def files(self) -> list[str]:
        return [f for f, _ in self._files]

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    @property
    def loaded(self) -> bool:
        """Whether the rows were read into memory (then they are used instead of the files)."""
        return self._table is not None

    def dataset(self) -> "pads.Dataset":
        """The dataset, after checking that its files are still the ones loaded."""
        for path, stamp in self._files:
            if _stamp(path) != stamp:
                now = "was removed" if not os.path.exists(path) else "changed"
                raise SourceError(f"{Path(path).name} of {self.shown} {now} after the load; "
                                  "run the load again to read it as it is now")
        return self._dataset

    def table(self) -> pa.Table:
        """All rows, read once and kept."""
        if self._table is None:
            try:
                self._table = self.dataset().to_table()
            except (OSError, pa.ArrowInvalid) as exc:
                raise SourceError(f"cannot read {self.shown}: {exc}") from exc
        return self._table

    def batches(self, rows: int = STREAM_ROWS) -> Iterator[pa.RecordBatch]:
        """The rows in order, a batch at a time, without keeping them (the kept table if read)."""
        return self._stream(rows)

    def _stream(self, rows: int, ahead_files: int = READ_AHEAD_FILES) -> Iterator[pa.RecordBatch]:
        if self._table is not None:
            yield from self._table.to_batches(max_chunksize=rows)
            return
        fragments = list(self.dataset().get_fragments())
        ahead = min(len(fragments), ahead_files, os.cpu_count() or 1)
        if ahead <= 1:
            for fragment in fragments:
                yield from _fragment_batches(fragment, self.schema, rows)
        else:
            yield from _read_ahead(fragments, self.schema, rows, ahead)

    def slice(self, offset: int = 0, length: int | None = None) -> pa.Table:
        """Rows [offset, offset+length) as a table, decoding only up to the last of them."""
        if self._table is not None:
            return self._table.slice(offset, length)
        end = self.num_rows if length is None else min(self.num_rows, offset + length)
        parts: list[pa.RecordBatch] = []
        at = 0
        if end > offset:
            # Rows within the first batch (a preview) come from the first file: reading ahead would
            # decode the next files for nothing and wait for its threads to stop (40 ms of a cluster
            # select's 270 in bench/cluster_sql.py's filter, whose result is 8 files).
            for batch in self._stream(min(STREAM_ROWS, end), READ_AHEAD_FILES if end > STREAM_ROWS else 1):
                lo, hi = max(offset, at), min(end, at + batch.num_rows)
                if lo < hi:
                    parts.append(batch.slice(lo - at, hi - lo))
                at += batch.num_rows
                if at >= end:
                    break
        return pa.Table.from_batches(parts, self.schema)

    def __repr__(self) -> str:
        return f"LazyTable({self.shown}, {self.num_rows} rows, {'read' if self.loaded else 'on disk'})"

    def local_scan(self) -> "pa.Table | pads.Dataset":
        """What DuckDB scans: the kept rows, or the dataset (DuckDB reads the files)."""
        return self._table if self._table is not None else self.dataset()


class DistributedTable(LazyTable):
    """A cluster select's result, left on the cluster: the parquet files Daft's workers wrote into
    the lake's hidden folder for this kernel (storage every node sees; sqlengines/cluster.py says
    why there), in the result's row order.

    Later cluster selects and saves read the files where they run, a Python cell's actors read
    their own row groups (origins.py), a preview decodes its first rows. Everything that needs
    all the rows in the kernel (a local statement, a sort, a download, a save in another format)
    gets them only while they fit in `keep_bytes` (CONSOLE_RESULT_KEEP_BYTES); past it, a clear
    "save it first". The files go with the object (garbage-collected, or the kernel exiting), and
    a driver that stops (idle, interrupt) takes nothing of it.
    """

    def __init__(self, files: list[str], name: str, folder: Path, keep_bytes: int) -> None:
        import pyarrow.dataset as pads

        super().__init__(pads.dataset(files, format="parquet"), f"distributed table {name}")
        self.name = name
        self.folder = folder
        self.keep_bytes = keep_bytes
        on_disk = sum(st[0] for _, st in self._files if st is not None)
        self.nbytes = max(self.nbytes, on_disk)  # footers that cannot say count as their files
        weakref.finalize(self, shutil.rmtree, str(folder), True)

    def dataset(self) -> "pads.Dataset":
        try:
            return super().dataset()
        except SourceError:
            raise SourceError(f"the files of the {self.shown} changed or were removed since its select "
                              f"(in {self.folder}); run the select that made {self.name} again") from None

    def require_fits(self, nbytes: int, what: str = "reading all its rows") -> None:
        """SourceError unless `nbytes` of it may come into the kernel."""
        if nbytes <= self.keep_bytes:
            return
        raise SourceError(
            f"{self.name} is a distributed table ({self.num_rows} rows, about {_mib(self.nbytes)} on the cluster); "
            f"{what} would bring more than CONSOLE_RESULT_KEEP_BYTES ({_mib(self.keep_bytes)}) into the kernel. "
            f"Save it first (save overwrite {self.name} as delta.`db.{self.name}`; runs on the cluster), "
            "or keep working on it with cluster selects (sql.engine \"cluster\" or \"auto\")")

    def table(self) -> pa.Table:
        if self._table is None:
            self.require_fits(self.nbytes)
        return super().table()

    def batches(self, rows: int = STREAM_ROWS) -> Iterator[pa.RecordBatch]:
        self.require_fits(self.nbytes)
        return super().batches(rows)

    def slice(self, offset: int = 0, length: int | None = None) -> pa.Table:
        end = self.num_rows if length is None else min(self.num_rows, offset + length)
        if self._table is None and self.num_rows:
            self.require_fits(self.nbytes * end // self.num_rows, f"reading its first {end} rows")
        return super().slice(offset, length)

    def local_scan(self) -> "pa.Table | pads.Dataset":
        self.require_fits(self.nbytes, "a local (DuckDB) statement on it")
        return super().local_scan()


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


Entry = Union[pa.Table, LazyTable]


def as_table(entry: Entry) -> pa.Table:
    return entry.table() if isinstance(entry, LazyTable) else entry


def memory_bytes(entry: Entry) -> int:
    """What an entry holds in this process's memory (a lazy table's files are not)."""
    if isinstance(entry, LazyTable):
        return entry.table().nbytes if entry.loaded else 0
    return int(entry.nbytes)


class Catalog(MutableMapping[str, pa.Table]):
    """Names to tables. As a Mapping its values are always `pa.Table` (a lazy one is read on
    access); `entry` and `entries` give what is stored, for the code that can stream."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}

    def __getitem__(self, name: str) -> pa.Table:
        return as_table(self._entries[name])

    def __setitem__(self, name: str, value: Entry) -> None:
        self._entries[name] = value

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def key(self, name: str) -> str | None:
        """The stored name for `name`: exact first, then case-insensitively (as SQL sees names)."""
        if name in self._entries:
            return name
        lowered = name.lower()
        return next((k for k in self._entries if k.lower() == lowered), None)

    def entry(self, name: str) -> Entry | None:
        """What is stored under `name` (case-insensitive), not read."""
        key = self.key(name)
        return None if key is None else self._entries[key]

    def entries(self) -> list[tuple[str, Entry]]:
        """(name, entry) pairs sorted by name; schema and num_rows need no read."""
        return sorted(dict(self._entries).items())  # a copy: the query thread reads while a cell runs

    def pin_under(self, folder: Path) -> None:
        """Read into memory every lazy table with a file under `folder`, before a save replaces it."""
        root = str(folder.resolve()).rstrip("/") + "/"
        for entry in self._entries.values():
            if isinstance(entry, LazyTable) and not entry.loaded and \
                    any(str(Path(f).resolve()).startswith(root) for f in entry.files):
                entry.table()


def scannable(tables: Mapping[str, pa.Table], name: str) -> "pa.Table | pads.Dataset | None":
    """What SQL should scan for `name`: a kept table, or a lazy table's dataset (no read)."""
    if isinstance(tables, Catalog):
        entry = tables.entry(name)
        if isinstance(entry, LazyTable):
            return entry.local_scan()
        return entry
    if name in tables:
        return tables[name]
    lowered = name.lower()
    return next((t for k, t in tables.items() if k.lower() == lowered), None)


def _fragment_batches(fragment: "pads.Fragment", schema: pa.Schema, rows: int) -> Iterator[pa.RecordBatch]:
    """One file's rows, `rows` at a time.

    Not through pyarrow's dataset scanner: it decodes whole row groups ahead even with the least
    readahead (1.6 GB in flight to stream a 0.63 GB table, and 2.7 s for its first 100 rows,
    measured); the parquet file reader decodes a batch's rows at a time (10 ms, 30 MB). A file
    with partition values or other columns than the table (a delta table's older files after
    a schema change) goes through the scanner, which fills and casts them.
    """
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    plain = isinstance(fragment, pads.ParquetFileFragment) and str(fragment.partition_expression) == "true" \
        and fragment.physical_schema.names == schema.names
    if not plain:
        yield from fragment.to_batches(schema=schema, batch_size=rows, batch_readahead=0)
        return
    with fragment.open() as stream:
        file = pq.ParquetFile(stream)
        groups = [g.id for g in fragment.row_groups or []]  # a fragment may name some of them
        for batch in file.iter_batches(batch_size=rows, row_groups=groups or None):
            yield batch if batch.schema.equals(schema) else batch.cast(schema)


def _read_ahead(fragments: list["pads.Fragment"], schema: pa.Schema, rows: int,
                ahead: int) -> Iterator[pa.RecordBatch]:
    """The fragments' batches in order, `ahead` files decoded at once by threads (pyarrow's
    decoder lets go of the GIL), each at most READ_AHEAD_BATCHES batches ahead of the reader.
    A reader that stops early (a preview) stops the threads."""
    import queue
    import threading

    stop = threading.Event()
    done = object()
    queues: list[queue.Queue[object]] = [queue.Queue(READ_AHEAD_BATCHES) for _ in fragments]

    def put(q: queue.Queue[object], item: object) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def decode(i: int) -> None:
        try:
            for batch in _fragment_batches(fragments[i], schema, rows):
                if not put(queues[i], batch):
                    return
            put(queues[i], done)
        except BaseException as exc:  # handed to the reader, which raises it
            put(queues[i], exc)

    threads: list[threading.Thread] = []

    def start(i: int) -> None:
        if i < len(fragments):
            threads.append(threading.Thread(target=decode, args=(i,), name=f"read-ahead-{i}", daemon=True))
            threads[-1].start()

    try:
        for i in range(ahead):
            start(i)
        for i, q in enumerate(queues):
            while (item := q.get()) is not done:
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, pa.RecordBatch)
                yield item
            start(i + ahead)  # file i is read: the next one starts
    finally:
        stop.set()
        for q in queues:  # a decoder blocked on a full queue puts its batch and sees the stop
            while not q.empty():
                q.get_nowait()
        for thread in threads:
            thread.join()


def _local_paths(dataset: "pads.Dataset") -> list[str]:
    """The dataset's files as paths here (deltalake's are relative to a subtree filesystem)."""
    base = str(getattr(getattr(dataset, "filesystem", None), "base_path", "") or "")
    return [os.path.join(base, f) if base and not os.path.isabs(f) else f for f in getattr(dataset, "files", [])]


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _estimated_bytes(dataset: "pads.Dataset") -> int:
    """The decoded (Arrow) size the parquet footers announce (0 when they cannot say).

    A fixed-width column decodes to rows x width whatever its encoding (a dictionary-encoded int
    column's pages are a fraction of that); other columns count their uncompressed pages. SQL's
    engine choice compares this with sql.clusterBytes (console/kernel/sqlengines/choice.py).
    """
    widths = {i: f.type.bit_width // 8 for i, f in enumerate(dataset.schema)
              if pa.types.is_primitive(f.type) and not pa.types.is_boolean(f.type)}
    total = 0
    try:
        for fragment in dataset.get_fragments():
            meta = getattr(fragment, "metadata", None)
            if meta is None:
                return 0
            flat = meta.num_columns == len(dataset.schema) and \
                all(meta.schema.column(i).path == dataset.schema[i].name for i in range(meta.num_columns))
            for g in range(meta.num_row_groups):
                group = meta.row_group(g)
                if not flat:
                    total += group.total_byte_size
                    continue
                for i in range(group.num_columns):
                    pages = group.column(i).total_uncompressed_size
                    total += max(pages, group.num_rows * widths[i]) if i in widths else pages
    except (OSError, pa.ArrowInvalid, AttributeError, ValueError):
        return 0
    return total
