"""The kernel's side of SQL on the cluster: the Daft driver process, its inputs and its answers.

The driver (cluster_driver.py) starts on the session's first cluster statement and stays for the
next ones (Daft's Ray workers take seconds to start). It is a child process, not a thread: an
interrupt or a statement past CONSOLE_SQL_CLUSTER_TIMEOUT_SECONDS kills it, which ends its Ray job
and with it every task of the query, and the cell fails at once with a clear message.

Inputs travel by name, never by value through the driver's pipe: a loaded parquet/delta table not
read yet, or an earlier cluster result, goes as its file list (the driver's Ray workers read the
files on their own nodes, so the lake and the cache must be storage every node sees); a table the
kernel already holds goes as an Arrow IPC file in the session's cache folder. The result stays on
the cluster side: Daft's workers write it as parquet into <lake>/.cluster_sql/<kernel's>/<id>/,
and the catalog gets a DistributedTable over those files (schema and row count from their footers).

Why the lake and not the session's cache: the lake is the one folder that every node must see
already (docs/cluster-sql.md), and under the sandbox's identities the Ray zone's workers may
write there (members group), while a session's cache folder is its own uid's, 0700
(cluster/walls.py): the workers could not write into it. The kernel's folder there has an
unguessable name under a folder nobody may list (as the hand-off folders), is group-writable for
the workers, is hidden from lake listings (a dot name), and its name is kept in the session's
private cache so the session's next kernel removes what a crashed one left.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import uuid
import weakref
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa

from console.kernel.catalog import DistributedTable, LazyTable, as_table
from console.kernel.errors import CellError
from console.wire.channel import Channel, ProtocolError, new_request_id
from console.wire.daft import FROM_DRIVER, DriverAnswer, DriverConnect, DriverQuery, FileGroup, TableInput

log = logging.getLogger(__name__)

_ROOT = Path(__file__).resolve().parents[3]
CONNECT_TIMEOUT = 120.0  # ray.init plus Daft's first runner; the spike measured 1 to 9 s
# A driver with no cluster statement for this long is stopped: Daft's workers hold about 600 MB
# of the cluster per session while they live (the next statement starts them again, in seconds).
IDLE_SECONDS = 600.0
RESULTS_DIR = ".cluster_sql"  # in the lake: one folder per kernel, in it one folder of parquet files per result
_RESULTS_NOTE = "results_folder"  # in <cache>/.cluster_sql: the name of this session's folder in the lake


class Written(NamedTuple):
    """What Daft's workers wrote: the files in row order, and each one's partition values (text)."""

    files: list[str]
    partitions: list[dict[str, str | None]]


class ClusterSql:
    """One session's Daft driver on its Ray cluster (started lazily, killed to cancel)."""

    def __init__(self, cfg: Any, cache_dir: Path, cluster: Any = None) -> None:
        self.cfg = cfg
        self.cluster = cluster  # the session's RayCluster (a kernel's asks its server for the head)
        self.folder = cache_dir / ".cluster_sql"
        self.results = Path(cfg.data_dir) / "lake" / RESULTS_DIR / uuid.uuid4().hex
        self._forget_earlier_results()
        self._proc: subprocess.Popen[bytes] | None = None
        self._channel: Channel | None = None  # the running driver's (console/wire/daft.py)
        self._nodes = 0
        # An interrupt is for the cell: kept until the next cell begins (begin()), it refuses a
        # statement about to ask the driver, and kills the driver of one asking now.
        self._guard = threading.Lock()
        self._interrupted = False
        self._asking = False
        self.worker_nodes: list[str] = []  # where the last statement's Daft workers ran (Ray node ids)
        self.daft_actors: dict[str, int] = {}  # live Daft actors per Ray job after the last statement
        self._lock = threading.Lock()  # a statement and the idle stop never overlap
        self._idle: threading.Timer | None = None

    # ---- public
    @property
    def connected(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def nodes(self) -> int:
        """Nodes with CPUs in the session's cluster (connects the driver if it is not yet)."""
        with self._lock:
            try:
                self._ensure()
            finally:
                self._touch()
        return self._nodes

    def query(self, daft_sql: str, refs: tuple[str, ...], catalog: Any, needs_cpu: bool,
              line: int, column: int, name: str = "result", functions: dict[str, Any] | None = None,
              values: dict[str, str] | None = None) -> DistributedTable:
        """Run translated SQL over the catalog tables `refs` names; the result stays in files on the cluster side.
        functions, values: what DuckDB computes inside it, and its VALUES (daft.DaftPlan)."""
        self._results_folder()
        out = self.results / uuid.uuid4().hex
        try:
            files = self.write(daft_sql, refs, catalog, needs_cpu, line, column, out,
                               functions=functions, values=values).files
            return DistributedTable(files, name, out, int(self.cfg.get("RESULT_KEEP_BYTES") or 256 << 20))
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise

    def write(self, daft_sql: str, refs: tuple[str, ...], catalog: Any, needs_cpu: bool,
              line: int, column: int, out: Path, delta: bool = False, partition_by: tuple[str, ...] = (),
              functions: dict[str, Any] | None = None, values: dict[str, str] | None = None) -> "Written":
        """Daft's workers write the select's result as parquet files into `out` (in hive folders by
        `partition_by`); their paths in row order, and each one's partition values."""
        self.folder.mkdir(parents=True, exist_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        _shared_folder(out)
        inputs: list[Path] = []
        with self._lock:
            if self._idle is not None:
                self._idle.cancel()
            try:
                query = DriverQuery(new_request_id(), daft_sql, {}, str(out), needs_cpu=needs_cpu, delta=delta,
                                    partition_by=list(partition_by), functions=functions or {}, values=values or {})
                return self._write(query, refs, catalog, line, column, inputs)
            finally:
                self._touch()

    def _write(self, query: DriverQuery, refs: tuple[str, ...], catalog: Any, line: int, column: int,
               inputs: list[Path]) -> "Written":
        out = Path(query.out_dir)
        try:
            query = dataclasses.replace(query, tables={ref: self._spec(ref, catalog, inputs, line, column)
                                                       for ref in refs})
            self._ensure()
            reply = self._ask(query, float(self.cfg.get("SQL_CLUSTER_TIMEOUT_SECONDS") or 600.0), line, column)
            if reply.error:
                raise reply_error(reply, out, line, column)
            self._nodes = reply.nodes or self._nodes
            self.worker_nodes = list(reply.worker_nodes)
            self.daft_actors = dict(reply.daft_actors)
            files = list(reply.files)
            unseen = [f for f in files if not os.path.isfile(f)]
            if unseen or (not files and not query.partition_by):  # (no rows in no partition: no file)
                raise CellError("sql", f"the cluster wrote the result into {out}, but this machine does not see "
                                f"{unseen[0] if unseen else 'any file there'}: the lake must be on storage "
                                "every node of the cluster sees, at the same path (docs/cluster-sql.md)",
                                line, column)
            return Written(files, [dict(v) for v in reply.partitions])
        finally:
            for path in inputs:
                path.unlink(missing_ok=True)

    def _forget_earlier_results(self) -> None:
        """Remove the results an earlier kernel of this session left (its catalog, their only reader, is gone)."""
        note = self.folder / _RESULTS_NOTE
        try:
            name = note.read_text().strip()
        except OSError:
            return
        if len(name) == 32 and all(c in "0123456789abcdef" for c in name):
            shutil.rmtree(self.results.parent / name, ignore_errors=True)
        note.unlink(missing_ok=True)

    def _results_folder(self) -> None:
        if self.results.is_dir():
            return
        top = self.results.parent
        top.mkdir(parents=True, exist_ok=True)
        st = top.stat()
        if st.st_uid == os.geteuid() and st.st_mode & 0o7777 != 0o3331:
            top.chmod(0o3331)  # members make their folders in it; nobody lists it or removes another's
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / _RESULTS_NOTE).write_text(self.results.name)
        self.results.mkdir(mode=0o770)
        self.results.chmod(0o2770)  # Daft's workers (the members group) write in it; the lake's group stays
        weakref.finalize(self, shutil.rmtree, str(self.results), True)

    def _touch(self) -> None:
        """(Re)start the idle countdown of a running driver."""
        if self._idle is not None:
            self._idle.cancel()
        if self.connected:
            self._idle = threading.Timer(IDLE_SECONDS, self._stop_if_idle)
            self._idle.daemon = True
            self._idle.start()

    def _stop_if_idle(self) -> None:
        if self._lock.acquire(blocking=False):  # a statement running now keeps it
            try:
                self.close()
            finally:
                self._lock.release()

    def begin(self) -> None:
        """A new cell: an earlier interrupt is spent."""
        with self._guard:
            self._interrupted = False

    def interrupt(self) -> None:
        """Stop the cell's statements: the one asking the driver now (its driver is killed, and
        with it the query's Ray job) and any later one of the cell."""
        with self._guard:
            self._interrupted = True
            asking = self._asking
        if asking:
            self.close()

    def shutdown(self) -> None:
        """The session ends: the driver, and every result of this kernel with it."""
        self.close()
        shutil.rmtree(self.results, ignore_errors=True)
        (self.folder / _RESULTS_NOTE).unlink(missing_ok=True)

    def close(self) -> None:
        """Stop the driver (idle, interrupt, timeout); the results stay, in their files."""
        if self._idle is not None:
            self._idle.cancel()
        proc, self._proc = self._proc, None
        channel, self._channel = self._channel, None
        if proc is not None and proc.poll() is None:
            _kill(proc)
        if channel is not None:
            channel.end()  # whoever waits for an answer stops waiting now, whatever holds the pipe
            channel.close()

    # ---- internals
    def _spec(self, ref: str, catalog: Any, inputs: list[Path], line: int, column: int) -> TableInput:
        entry = catalog.entry(ref) if hasattr(catalog, "entry") else catalog.get(ref)
        if entry is None:
            names = ", ".join(sorted(catalog)) or "none yet"
            raise CellError("sql", f"table '{ref}' not found; tables in this session: {names}", line, column)
        if isinstance(entry, DistributedTable) and not entry.loaded:
            entry.dataset()  # raises if its files went
            return TableInput(files=list(entry.files))
        if isinstance(entry, LazyTable) and not entry.loaded:
            entry.dataset()  # raises if a file changed since the load
            groups = _partition_groups(entry)
            if groups is not None:
                if len(groups) == 1 and not groups[0].values:
                    return TableInput(files=list(groups[0].files))
                # Partitioned (a delta table, hive folders): the files by their partition values,
                # which the driver adds as columns; the kernel reads none of the rows.
                return TableInput(groups=groups, columns=list(entry.column_names),
                                  types={f.name: str(f.type) for f in entry.schema})
        table = as_table(entry)
        path = self.folder / f"input-{uuid.uuid4().hex}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        inputs.append(path)
        return TableInput(ipc=str(path))

    def _ensure(self) -> None:
        if self.connected:
            return
        self.close()
        from console.cluster.head import RAY_ENV, RayCluster

        cluster = self.cluster or RayCluster(self.cfg)
        info = cluster.ensure()
        address = info.address
        env = {**os.environ, **RAY_ENV, "PYTHONUNBUFFERED": "1"}
        env.pop("RAY_ADDRESS", None)
        token = getattr(info, "auth_token", None)
        if token:  # the embedded head refuses drivers without its token (as the cell worker does)
            env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token})
        if cluster.external_address:  # loopback-only mode is for our own head (as the Python cells do)
            env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
        self.folder.mkdir(parents=True, exist_ok=True)
        # Pipes of our own rather than Popen's: the channel owns its two ends (it closes them),
        # and no file object closes the same descriptor numbers again later.
        to_driver_r, to_driver_w = os.pipe()
        from_driver_r, from_driver_w = os.pipe()
        driver_log = open(self.folder / "driver.log", "ab")
        try:
            proc = subprocess.Popen([sys.executable, "-m", "console.kernel.sqlengines.cluster_driver"],
                                    stdin=to_driver_r, stdout=from_driver_w, stderr=driver_log, env=env,
                                    cwd=str(self.folder), start_new_session=True)
        except BaseException:
            for fd in (to_driver_w, from_driver_r):
                os.close(fd)
            raise
        finally:
            driver_log.close()
            os.close(to_driver_r)
            os.close(from_driver_w)
        channel = Channel(FROM_DRIVER, read=from_driver_r, write=to_driver_w, answers=(DriverAnswer,),
                          name="daft driver->kernel")
        self._proc, self._channel = proc, channel
        threading.Thread(target=_read_answers, args=(channel, proc), name="daft-driver-answers", daemon=True).start()
        # Its exit wakes whoever waits for an answer, even if a process it left holds its stdout.
        threading.Thread(target=_end_with, args=(channel, proc), name="daft-driver-exit", daemon=True).start()
        reply = self._ask(DriverConnect(new_request_id(), address), CONNECT_TIMEOUT, 1, 1, connecting=address)
        if reply.error:
            self.close()
            raise CellError("sql", reply.error, 1, 1)
        self._nodes = reply.nodes

    def _ask(self, message: DriverConnect | DriverQuery, timeout: float, line: int, column: int,
             connecting: str = "") -> DriverAnswer:
        """The driver's answer to `message`. Waits for the answer, the driver's exit or an interrupt
        (which kills the driver: the query's tasks end with its Ray job), whichever comes first:
        no polling."""
        proc, channel = self._proc, self._channel
        assert proc is not None and channel is not None
        with self._guard:
            if self._interrupted:
                raise CellError("interrupted", "the query was interrupted (cancelled on the cluster)", line, column)
            self._asking = True
        try:
            return channel.request(message, DriverAnswer, timeout)
        except TimeoutError:
            self.close()
            if connecting:
                raise CellError("sql", f"could not connect to the Ray cluster at {connecting} within {timeout:g} s "
                                f"for SQL on the cluster: {_tail(self.folder / 'driver.log', 300)}",
                                line, column) from None
            raise CellError("sql", f"the select ran longer than {timeout:g} s on the cluster and was cancelled. "
                            "A sort or a join waits for free CPUs: other jobs (training actors) may hold "
                            "every CPU of the cluster. CONSOLE_SQL_CLUSTER_TIMEOUT_SECONDS sets the limit; "
                            'set sql.engine = "local" where type="conf"; runs it in the kernel.',
                            line, column) from None
        except ConnectionError:
            with self._guard:
                interrupted = self._interrupted
            self.close()
            if interrupted:
                raise CellError("interrupted", "the query was interrupted (cancelled on the cluster)",
                                line, column) from None
            try:
                code: int | None = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            raise CellError("sql", f"the cluster SQL driver exited (exit code {code}): "
                            f"{_tail(self.folder / 'driver.log')}", line, column) from None
        finally:
            with self._guard:
                self._asking = False


def _read_answers(channel: Channel, proc: subprocess.Popen[bytes]) -> None:
    """Hand the driver's answers to their requests until it closes its end; then close ours."""
    try:
        for _ in channel.messages():  # the vocabulary holds answers only
            pass
    except ProtocolError as exc:  # a driver that breaks the protocol is stopped, with the reason
        log.warning("the cluster SQL driver broke its protocol; stopped: %s", exc)
        _kill(proc)
    finally:
        channel.end()
        if channel.read_fd is not None:
            os.close(channel.read_fd)


def _end_with(channel: Channel, proc: subprocess.Popen[bytes]) -> None:
    """The driver's exit ends its channel: a request waiting for an answer is woken."""
    proc.wait()
    channel.end()


def reply_error(reply: DriverAnswer, out: Path, line: int, column: int) -> CellError:
    """The cell's error for the driver's {"error": …}: Daft refusing or failing the statement is said
    as what the cluster cannot run, with the setting that runs it locally (daft_errors.py)."""
    from console.kernel.sqlengines.daft_errors import cannot_run

    why = reply.error
    if "Permission denied" in why:  # writing the result, not the statement: the lake's permissions
        why += f" (Daft's workers write the result into {out}: the lake must be writable by the cluster's workers)"
    elif reply.cannot_run:
        return CellError("sql", cannot_run(why), line, column)
    return CellError("sql", f"on the cluster: {why}", line, column)


_PARTITION_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "string",
                    "large_string", "bool", "date32[day]", "double", "float")


def _partition_groups(entry: LazyTable) -> list[FileGroup] | None:
    """The loaded table's parquet files grouped by their partition values (file order kept), when the
    files and those values give the whole table: each file holds the table's other columns under
    their names and types (no older schema of a delta table), and each partition value is a plain
    scalar. None: the kernel reads the table and hands it over instead."""
    import pyarrow.dataset as pads

    try:
        fragments = list(entry.dataset().get_fragments())
    except Exception:
        return None
    if not fragments:
        return None
    base = str(getattr(getattr(entry.dataset(), "filesystem", None), "base_path", "") or "")
    groups: dict[tuple[tuple[str, Any], ...], list[str]] = {}
    for f in fragments:
        if not isinstance(f, pads.ParquetFileFragment):
            return None
        values = pads.get_partition_keys(f.partition_expression)
        stored = [n for n in entry.schema.names if n not in values]
        physical = f.physical_schema
        if physical.names != stored or any(physical.field(n).type != entry.schema.field(n).type for n in stored):
            return None
        for name, value in values.items():
            if str(entry.schema.field(name).type) not in _PARTITION_TYPES or isinstance(value, (bytes, list, dict)):
                return None
        # JSON-safe (a date as its ISO text): the driver casts each value to the column's type
        key = tuple(sorted((k, v.isoformat() if hasattr(v, "isoformat") else v) for k, v in values.items()))
        path = os.path.join(base, f.path) if base and not os.path.isabs(f.path) else f.path
        groups.setdefault(key, []).append(path)
    return [FileGroup(dict(key), files) for key, files in groups.items()]


def _shared_folder(out: Path) -> None:
    """`out`, where Daft's workers (the Ray zone's uid) write: a folder this process made is
    group-writable, as the members' umask 002 makes them (console/cluster/identity.py) whatever
    this process's own umask; anyone else's keeps its permissions."""
    for folder in (out.parent, out):
        st = folder.stat()
        if st.st_uid == os.geteuid() and not st.st_mode & 0o020:
            folder.chmod(st.st_mode | 0o070)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _tail(path: Path, n: int = 1500) -> str:
    try:
        return path.read_bytes()[-n:].decode(errors="replace").strip() or "(no output)"
    except OSError:
        return "(no log)"
