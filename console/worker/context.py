"""The pyjava API a cell sees: PythonContext (`context`) and RayContext, as MLSQL defines them.

The cell's worker builds a PythonContext with the job's input table, conf and a `host` object
that knows how to reach the notebook's Ray cluster. Outside a worker (a plain script importing
pyjava) the same classes work on their own, like pyjava's "not in MLSQL" mode.
"""
from __future__ import annotations

import json
import os
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Protocol

import pyarrow as pa

from console.actors import data, fragments
from console.actors.capture import metrics_line
from console.actors.data import DataServer
from console.worker.schema import SchemaError, parse_schema, rows_to_table
from console.worker import streaming_tar


# The conf key that carries the parameters' values to a cell's context (context.params).
PARAMS_KEY = "__params__"


class JobHost(Protocol):
    """What the worker provides: connecting this process to the notebook's Ray cluster."""

    def connect_ray(self, url: str | None, **kwargs: Any) -> None: ...

    def default_partitions(self) -> int: ...


class _StandaloneHost:
    """pyjava outside the product: connect to the address given, as pyjava did."""

    def connect_ray(self, url: str | None, **kwargs: Any) -> None:
        import ray

        if ray.is_initialized():
            return
        if url in (None, "local"):
            ray.init(**kwargs)
        elif url == "worker" or url == "auto":
            ray.init(address="auto", **kwargs)
        else:
            ray.init(address=url if "://" in url else f"ray://{url}", **kwargs)

    def default_partitions(self) -> int:
        return os.cpu_count() or 1


def ray_connected() -> bool:
    import sys

    ray = sys.modules.get("ray")
    return bool(ray is not None and ray.is_initialized())


class PythonContext:
    """`context` in a cell: conf, the input (once), and the output table."""

    cache: dict = {}

    def __init__(self, context_id: str, iterator: Any, conf: dict[str, str], *,
                 table: pa.Table | None = None, model_table: pa.Table | None = None,
                 host: JobHost | None = None, table_path: str | None = None) -> None:
        self.context_id = context_id or str(uuid.uuid4())
        self.conf = conf
        self.input_data = iterator
        self.schema = ""
        self.output_data: list = [[]]
        # The IPC file (on /dev/shm) `table` is mapped from: actors on this node map it too.
        self._table_path = table_path if table is not None else None
        if self._table_path is not None:
            # Mapped again under the file's shared lock, so the kernel never writes another table
            # over it while this cell (or anything it keeps) can still read it.
            table = data.map_locked(self._table_path) or table
        # Direct reads: the kernel named the loaded table's files instead of writing it out;
        # the table is read here only if the cell asks for it in the driver.
        self._fragments = fragments.parse(conf.pop(fragments.FRAGMENTS_KEY, None))
        # The notebook's parameters (set … where type="defaultParam") with this run's values.
        self.params: dict[str, str] = json.loads(conf.pop(PARAMS_KEY, "") or "{}")
        self._table_value = table if table is not None or self._fragments else pa.table({})
        self._model_table = model_table
        self._host: JobHost = host or _StandaloneHost()
        self._output: pa.Table | None = None
        self._fetched = False
        self.rayContext = RayContext(self)

    @property
    def _table(self) -> pa.Table:
        if self._table_value is None:
            assert self._fragments is not None
            self._table_value = self._fragments.read_all()
        return self._table_value

    # ---- input (pyjava lets the raw input be read once)
    def _take_input(self) -> pa.Table:
        if self._fetched:
            raise Exception("input data can only be fetched once")
        self._fetched = True
        return self._table

    def fetch_once_as_rows(self) -> Iterator[dict[str, Any]]:
        return data.rows(self._take_input())

    def fetch_once(self) -> Iterator[Any]:
        return data.pandas_batches(self._take_input())

    fetch_once_as_dataframe = fetch_once

    def fetch_once_as_batch_rows(self) -> Iterator[Iterator[dict[str, Any]]]:
        for batch in self._take_input().to_batches(max_chunksize=data.ROWS_PER_BATCH):
            yield iter(batch.to_pandas().to_dict("records"))

    def noops_fetch(self) -> None:
        self._take_input()

    def read_params_once(self) -> dict[str, str]:
        """Byzer's project-mode call that reads the conf from stdin; here the job brought it: the conf."""
        return self.conf

    # ---- output
    def build_result(self, items: Any, block_size: int = 1024) -> None:
        """The cell's output table: rows (dicts), a pandas DataFrame or an Arrow table."""
        self._output = rows_to_table(items, parse_schema(self.conf.get("schema")))

    def build_result_from_dir(self, target_path: str, block_size: int = 1024) -> None:
        self.build_result(streaming_tar.build_rows_from_file(target_path), block_size)

    def set_output(self, value: Any, schema: str = "") -> None:
        self._output = rows_to_table(value, parse_schema(schema or self.conf.get("schema")))

    def output(self) -> pa.Table | None:
        return self._output


# The contexts of the cells running in this process, innermost last (RayContext.context).
_running: list[PythonContext] = []


@contextmanager
def running(context: PythonContext) -> Iterator[None]:
    """While a cell's code runs, `RayContext.context` is its context."""
    _running.append(context)
    try:
        yield
    finally:
        _running.remove(context)


class _CellContext:
    """`RayContext.context`: a RayContext's own PythonContext; on the class, the running cell's.

    Old scripts reach the cell's context this way instead of through `globals()["context"]`.
    """

    def __get__(self, obj: "RayContext | None", owner: type | None = None) -> PythonContext:
        if obj is not None:
            return obj.python_context
        if not _running:
            # AttributeError, so that hasattr() and introspection (completion, inspect) see no value.
            raise AttributeError("RayContext.context is the running cell's context, and no cell is "
                               "running here; inside a cell use `context` (a global of every cell)")
        return _running[-1]


class RayContext:
    """The cell's handle on its data, its output and the Ray cluster (pyjava's RayContext)."""

    cache: dict = {}
    conn_cache: dict = {}
    context = _CellContext()

    def __init__(self, python_context: PythonContext) -> None:
        self.python_context = python_context
        self.context_id = python_context.context_id
        self.is_in_mlsql = True
        self.is_setup = False
        self.mock_data: list = []
        self.is_dev = os.environ.get("MLSQL_DEV") == "1"
        self._servers: list[DataServer] | None = None

    # ---- connecting
    @staticmethod
    def connect(_context: Any, url: str | None, **kwargs: Any) -> "RayContext":
        """url None: no Ray; "host:port" (Ray Client), "local", "auto": the notebook's cluster."""
        if isinstance(_context, PythonContext):
            context = _context
        elif isinstance(_context, dict):
            if "context" in _context:
                context = _context["context"]
            else:
                context = PythonContext("", [], {"pythonMode": "ray"})
                context.rayContext.is_in_mlsql = False
        else:
            raise Exception("context is not detect. make sure it's in globals().")
        if url is not None:
            context._host.connect_ray(url, **kwargs)
        return context.rayContext

    # ---- data
    def conf(self) -> dict[str, str]:
        return self.python_context.conf

    def data_servers(self) -> list[DataServer]:
        """One handle per partition of the input table (put into Ray's object store under Ray)."""
        if self._servers is None:
            partitions = self.conf().get("_numPartitions") or self.python_context._host.default_partitions()
            tz = self.conf().get("timezone", "UTC")
            frags = self.python_context._fragments
            if frags is not None and not data.is_file_table(frags.schema.empty_table()):
                self._servers = data.fragment_handles(frags, int(partitions), 40000, tz)
                if self._servers is not None:
                    return self._servers
            table = self.python_context._table
            parts = data.split(table, int(partitions))
            path = None if data.is_file_table(table) else self.python_context._table_path  # sorted: a copy
            self._servers = data.partition_handles(parts, 40000, tz, path)
        return self._servers

    def data_servers_in_ray(self) -> list[DataServer]:
        return self.data_servers()

    @staticmethod
    def fetch_once_as_rows(data_server: DataServer) -> Iterator[dict[str, Any]]:
        return data.rows(data_server.arrow())

    @staticmethod
    def collect_from(servers: Iterable[DataServer]) -> Iterator[dict[str, Any]]:
        for server in servers:
            yield from data.rows(server.arrow())

    def collect(self) -> Iterator[dict[str, Any]]:
        return RayContext.collect_from(self.data_servers())

    @staticmethod
    def fetch_data_from_single_data_server(data_server: DataServer) -> Iterator[Any]:
        return data.pandas_batches(data_server.arrow())

    @staticmethod
    def fetch_data_from_single_data_server_as_arrow(data_server: DataServer) -> Iterator[pa.Table]:
        for batch in data_server.arrow().to_batches(max_chunksize=data.ROWS_PER_BATCH):
            yield pa.Table.from_batches([batch])

    def to_dataset(self, num_tables_per_block: int = 1) -> Any:
        """The input as a Ray Dataset, one block per partition, each made where an actor would read it.

        (Byzer groups tables into blocks; here a partition is already one table, so
        num_tables_per_block has nothing to group and is accepted for compatibility.)
        """
        if not ray_connected():
            raise Exception("to_dataset needs Ray: call RayContext.connect(globals(), \"127.0.0.1:10001\") first")
        import ray

        task: Any = ray.remote(_partition)
        refs: Any = [task.remote(s) for s in self.data_servers()]
        return ray.data.from_arrow_refs(refs)

    def to_pandas(self) -> Any:
        return self.to_arrow().to_pandas()

    # ---- fast paths: no row loop
    @staticmethod
    def collect_arrow(data_server: DataServer) -> pa.Table:
        """One partition as an Arrow table, zero-copy from the object store."""
        return data_server.arrow()

    @staticmethod
    def collect_numpy(data_server: DataServer, column: str | int) -> Any:
        """One column of one partition as numpy; a list column of equal lengths is 2-D."""
        return data.column_numpy(data_server.arrow(), column)

    def to_arrow(self) -> pa.Table:
        tables = [s.arrow() for s in self.data_servers()]
        return pa.concat_tables(tables) if tables else self.python_context._table

    # ---- models
    @staticmethod
    def parse_servers(host_ports: str) -> list[DataServer]:
        servers = []
        for item in (host_ports or "").split(","):
            if item.strip():
                host, _, port = item.strip().rpartition(":")
                servers.append(data.resolve(host, int(port)))
        return servers

    def fetch_as_dir(self, target_dir: str, servers: list[DataServer] | None = None) -> None:
        """Restore a file table (schema=file rows) into target_dir, e.g. a saved model."""
        servers = self.data_servers() if servers is None else servers
        if len(servers) != 1:
            raise Exception("Please make sure you have only one partition on Java/Spark Side")
        table = servers[0].arrow().sort_by("start")
        streaming_tar.save_rows_as_file(data.rows(table), target_dir)

    def collect_as_file(self, batch_size: int) -> Iterator[Any]:
        table = self.to_arrow()
        for batch in table.to_batches(max_chunksize=max(1, batch_size)):
            yield batch.to_pandas()

    # ---- output
    def build_result(self, items: Any, block_size: int = 1024) -> None:
        self.python_context.build_result(items, block_size)

    def build_result_from_dir(self, target_path: str) -> None:
        self.python_context.build_result_from_dir(target_path)

    def build_result_from_dataframe(self, df: Any) -> None:
        self.python_context.build_result(df)

    def log_metrics(self, step: int | None = None, **values: float) -> None:
        """Report custom metrics (drawn with the Keras ones); step defaults to the next one."""
        import sys

        sys.stdout.write(metrics_line({k: float(v) for k, v in values.items()}, step))
        sys.stdout.flush()

    # ---- dataMode=data: rows transformed on Ray
    def foreach(self, func_for_row: Callable[[dict], dict]) -> list[DataServer]:
        return self.setup(func_for_row)

    def map_iter(self, func_for_rows: Callable[[Iterator[dict]], Iterator[dict]]) -> list[DataServer]:
        return self.setup(None, func_for_rows)

    def setup(self, func_for_row: Callable | None, func_for_rows: Callable | None = None) -> list[DataServer]:
        if self.is_setup:
            raise ValueError("setup can be only invoke once")
        self.is_setup = True
        if self.conf().get("dataMode", "model") != "data":
            raise Exception('foreach/map_iter need dataMode=data: add !python conf "dataMode=data"; '
                            'or #%dataMode=data in the cell')
        schema = self.conf().get("schema")
        servers = self.data_servers()
        if ray_connected():
            import ray

            task = ray.remote(_transform)
            tables = ray.get([task.remote(s, func_for_row, func_for_rows, schema) for s in servers])
        else:
            tables = [_transform(s, func_for_row, func_for_rows, schema) for s in servers]
        self.python_context._output = pa.concat_tables(tables) if tables else None
        return [DataServer(s.host, s.port, s.timezone, table=t, num_rows=t.num_rows)
                for s, t in zip(servers, tables, strict=True)]


def _partition(server: DataServer) -> pa.Table:
    return server.arrow()


def _transform(server: DataServer, func_for_row: Callable | None, func_for_rows: Callable | None,
               schema: str | None) -> pa.Table:
    rows = data.rows(server.arrow())
    out = (func_for_row(r) for r in rows) if func_for_row is not None else func_for_rows(rows)  # type: ignore[misc]
    return rows_to_table(out, parse_schema(schema))


def model_servers(table: pa.Table | None, timezone: str = "UTC") -> str:
    """Register a model table as one partition and return the conf["modelServers"] text for it."""
    if table is None:
        return ""
    return str(data.partition_handles(data.split(table, 1), 49000, timezone)[0])


__all__ = ["DataServer", "PythonContext", "RayContext", "SchemaError", "model_servers"]
