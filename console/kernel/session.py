"""The kernel's brain: one notebook session's catalog of Arrow tables, settings and variables, and run_cell."""
from __future__ import annotations

import collections
import dataclasses
import functools
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import pyarrow as pa

from console import lang
from console.config import Config
from console.errors import UserError
from console.kernel import commands, include, origins, provenance, python_jobs, queries, replay as replaying, setvars
from console.kernel.catalog import Catalog, DistributedTable, Entry, LazyTable
from console.kernel.errors import CellError, data_error_position, internal_error
from console.kernel.host import CellRun
from console.kernel.provenance import Derivation
from console.kernel.results import ResultCache, result_event
from console.kernel.session_env import SessionEnvironment
from console.kernel.sql import SqlEngine
from console.lang import ParseError
from console.protocols import CellOutcome, Emit, NotebookLoader
from console.wire.kernel import ReplayInputs
from console.wire.cell import Failure, Output

if TYPE_CHECKING:
    from console.cluster.head import RayCluster
    from console.kernel.python_runtime import PythonRuntime
    from console.kernel.sqlengines.cluster import ClusterSql
    from console.sources import SourceContext


@functools.lru_cache(maxsize=256)
def _parse_cached(source: str, cell: str | int | None, kind: str) -> tuple[lang.Statement, ...]:
    return tuple(lang.parse_cell(source, cell, kind))


def _parse_cell(source: str, cell: str | int | None, kind: str) -> list[lang.Statement]:
    """parse_cell, remembered: re-running a cell is common and statements are immutable."""
    return list(_parse_cached(source, cell, kind))


class Session(SessionEnvironment):
    """Tables, `!python conf/env`, `set` variables and connections of one session, kept between cells.

    `tables` maps names to Arrow tables (a loaded parquet/delta table is read only where needed,
    console/kernel/catalog.py); each statement replaces at most the names it defines and only
    when it succeeds, so a failing statement leaves the catalog as it was before it.
    """

    def __init__(self, cfg: Config, emit: Emit | None = None, session_id: str = "default",
                 notebook_loader: NotebookLoader | None = None, cluster: "RayCluster | None" = None) -> None:
        """cluster: the Ray cluster Python cells and cluster SQL use (a kernel's main hands one that
        asks the server for the head); None: one of this data dir's own, made at first need."""
        self.cfg = cfg
        self.cluster = cluster
        self._emit: Emit = emit or (lambda message: None)
        self.emit: Emit = self._emit_shown
        self.session_id = session_id
        self.notebook_loader = notebook_loader
        self.tables = Catalog()
        self.variables: dict[str, str] = {}
        self.params: dict[str, None] = {}       # names set … where type="defaultParam" declared
        # Parameters -> declared default, and variables set from a parameter's other value -> None:
        # values from outside the notebook, escaped or refused where they land (lang/paramsafe.py).
        self.outside: dict[str, str | None] = {}
        self.conf: dict[str, str] = {}          # set … where type="conf"
        self.python_conf: dict[str, str] = {}   # !python conf
        self.python_env: dict[str, str] = {}    # !python env
        self.connections: dict[str, dict[str, str]] = {}
        self.partitions: dict[str, int] = {}    # run … as TableRepartition
        self.origins: dict[str, Any] = {}       # load → its files, for direct reads (origins.py)
        self.derived: dict[str, Derivation] = {}  # table (lower case) → the loads it came from (provenance.py)
        self._sql: SqlEngine | None = None
        self._cluster_sql: ClusterSql | None = None  # Daft on the Ray cluster, once a select goes there
        self._runtime: PythonRuntime | None = None
        self._env = None                         # the notebook's packages (session_env.py), read at first need
        self._env_applied = False
        self._interrupted = False
        self._prepared = False  # prepare_cell ran for the next cell (the kernel calls it before announcing it)
        self.replay: ReplayInputs | None = None  # set by the kernel for a replayed run (kernel/replay.py)
        self._including: list[str] = []
        self._builtins: dict[str, str] | None = None
        self.flow = commands.Flow()              # !if/!then/!elif/!else/!fi
        self.results = ResultCache(cfg, self.cache_dir)  # each cell's whole last result, for paging
        self.last_command: str = ""             # the last statement run, for !lastCommand

    # ------------------------------------------------------------------ public surface
    def _emit_shown(self, message: Any) -> None:
        """Send output on; the text names no folder of the server (lake:…, cache:… instead)."""
        if isinstance(message, Output) and message.stream != "image":
            message = dataclasses.replace(message, text=self.shown(message.text))
        elif isinstance(message, Failure):
            message = dataclasses.replace(message, message=self.shown(message.message),
                                          traceback=self.shown(message.traceback))
        self._emit(message)

    def shown(self, text: str) -> str:
        """`text` with the data folder's paths as a user sees them (console/sources/paths.py)."""
        from console.sources.paths import scrub

        return scrub(self.source_context(), text) if text else text

    @property
    def sql(self) -> SqlEngine:
        if self._sql is None:
            from console.sources.paths import sql_roots

            # SQL reads files only where load/save may (the lake, this session's cache, the roots).
            from console.kernel.sqlengines.choice import duckdb_memory_bytes

            # DuckDB holds at most its share of the session's memory and spills the rest into the session's cache.
            self._sql = SqlEngine(sql_roots(self.source_context()), temp_dir=self.cache_dir / ".duckdb_tmp",
                                  memory_limit=duckdb_memory_bytes(self.cfg))
            from console.kernel.ml import functions

            functions.install(self._sql)
        return self._sql

    @property
    def cluster_sql(self) -> ClusterSql:
        """The session's Daft driver on its Ray cluster (it connects on its first statement)."""
        if self._cluster_sql is None:
            from console.kernel.sqlengines.cluster import ClusterSql

            self._cluster_sql = ClusterSql(self.cfg, self.cache_dir, cluster=self.cluster)
        return self._cluster_sql

    @property
    def cache_dir(self) -> Path:
        """Where `--%cache=true` outputs live, so they survive a kernel restart."""
        return self.cfg.data_dir / "cache" / re.sub(r"[^A-Za-z0-9_.-]", "_", self.session_id)

    def lookup(self, name: str) -> pa.Table | None:
        return python_jobs.lookup_ci(self.tables, name)

    def run_cell(self, source: str, kind: str = "mlsql", cell: str | int | None = None,
                 run_id: str = "") -> CellOutcome:
        """Run every statement of a cell; errors come back in the outcome, never as exceptions.

        A fault of ours (a bug, a library's unexpected error) keeps the session: it is logged with
        an id, and the outcome's error names only that id.
        """
        if not self._prepared:  # run directly, not by a kernel that prepared it before announcing it
            self.prepare_cell()
        self._prepared = False
        self._builtins = None
        self.flow = commands.Flow()  # an !if left open by an earlier cell does not reach this one
        run = CellRun(run_id=run_id)
        error: Failure | None = None
        try:
            replaying.check_environment(self.replay, self.notebook_lock)
            self._execute(_parse_cell(source, cell, kind), cell, source, run)
            open_at = self.flow.unclosed()
            if open_at is not None:
                raise CellError("parse", f"!if on line {open_at} has no !fi", open_at, 1)
        except UserError as exc:  # a parse error, a cell's error (lang/, kernel/): the one shape
            error = exc.event()
        except KeyboardInterrupt:
            error = Failure(kind="interrupted", message="the cell was interrupted")
        except Exception as exc:  # a bug or an unexpected library error: keep the session
            error = internal_error(exc, f"session {self.session_id}, cell {cell}")
        if error is not None:
            error = dataclasses.replace(error, message=self.shown(error.message), traceback=self.shown(error.traceback))
        result = None
        if error is None and run.last is not None:
            result = result_event(run.last[0], run.last[1], int(self.cfg.RESULT_ROWS))
            if cell is not None:
                self.results.keep(str(cell), run.last[0], run.last[1])
        return CellOutcome(ok=error is None, result=result, error=error, tables_changed=run.changed,
                           io=run.io.entries, io_dropped=run.io.dropped,
                           lock_hash=self.environment_lock())

    def query(self, what: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a question about the session (a result page, completions) while cells may run.

        Called on the kernel's command thread, not the cell's: handlers only read the catalog.
        Raises LookupError or ValueError with a message the asker may see.
        """
        return queries.answer(self, what, args)

    def prepare_cell(self) -> None:
        """An interrupt of an earlier cell is spent (console.protocols.Engine.prepare_cell)."""
        self._interrupted = False
        for engine in (self._sql, self._cluster_sql):
            if engine is not None:
                engine.begin()
        self._prepared = True

    def interrupt(self) -> None:
        """Stop the running statement (a DuckDB query or a Python job) and the ones after it."""
        self._interrupted = True
        if self._sql is not None:
            self._sql.interrupt()
        if self._cluster_sql is not None:
            self._cluster_sql.interrupt()
        if self._runtime is not None:
            self._runtime.interrupt()
        deploy = sys.modules.get("console.kernel.raydeploy")  # loaded only once a model was registered
        if deploy is not None:
            deploy.interrupt(self)

    def shutdown(self) -> None:
        deploy = sys.modules.get("console.kernel.raydeploy")
        if deploy is not None:  # its worker and actors go first: they share the runtime's Ray head
            deploy.shutdown(self)
        if self._runtime is not None:
            self._runtime.shutdown()
            self._runtime = None
        self.release_environment()  # after the worker that ran in them
        if self._sql is not None:
            self._sql.close()
            self._sql = None
        if self._cluster_sql is not None:
            self._cluster_sql.shutdown()  # its distributed tables' files go too
            self._cluster_sql = None

    # ------------------------------------------------------------------ execution
    def _variables(self) -> Mapping[str, str]:
        """User variables over the built-ins (computed once per cell: this sits on every statement's path)."""
        if self._builtins is None:
            self._builtins = setvars.builtin_variables(self.cache_dir)
        return collections.ChainMap(self.variables, self._builtins)

    def variables_view(self) -> Mapping[str, str]:
        return self._variables()

    def run_statements(self, text: str, run: CellRun, cell: Any = None) -> None:
        self._execute(lang.parse(text, cell), cell, text, run)

    def _execute(self, stmts: list[lang.Statement], cell: str | int | None, text: str, run: CellRun) -> None:
        from console.sources import SourceError

        skip: str | None = None  # a Python cell's random output name, once its code built nothing
        for stmt in stmts:
            if self._interrupted:
                raise CellError("interrupted", "the cell was interrupted", stmt.line, stmt.column)
            if self.flow.skips(stmt):  # inside a branch of !if … !fi that was not taken
                continue
            if skip is not None and skip in stmt.source:
                continue
            written = stmt
            stmt = lang.substitute_statement(stmt, self._variables(), cell, text, outside=self.outside)
            self.last_command = stmt.source
            handler = getattr(self, "_run_" + type(stmt).__name__.lower())
            run.io.statement += 1
            run.reads = self._reads(stmt)
            try:
                handler(stmt, run, cell)
            except SourceError as exc:
                raise CellError("data", exc.message, *data_error_position(stmt, exc.message)) from None
            except _PrintedOnly as exc:  # the compiled steps after it would show a result never built
                skip = exc.name
            if isinstance(written, lang.Set) and written.type == "text":
                setvars.carry_outside(self, written)

    def _reads(self, stmt: lang.Statement) -> list[str]:
        """The catalog names a statement reads, for its outputs' lineage (provenance.py)."""
        refs: tuple[str, ...] = ()
        if isinstance(stmt, lang.Select):
            from console.kernel.sqlengines.router import table_refs

            refs = table_refs(stmt.sql)
        return provenance.inputs_of(stmt, refs)

    def put(self, name: str, table: Entry, run: CellRun) -> None:
        self.tables[name] = table
        # What the table is made of: the tables the statement read and what it loaded itself.
        loaded = [provenance.source_of(e, run.run_id) for e in run.io.entries
                  if e.access == "read" and e.statement == run.io.statement]
        made = provenance.merge(provenance.lookup(self.derived, run.reads), loaded)
        if run.trains:
            made = dataclasses.replace(made, model=True, trained_by=run.run_id)
        self.derived[name.lower()] = made
        self.partitions.pop(name, None)
        if name not in run.changed:
            run.changed.append(name)
        run.last = (name, table)

    def require(self, name: str, stmt: lang.Statement) -> pa.Table:
        table = self.lookup(name)
        if table is None:
            names = ", ".join(sorted(self.tables)) or "none yet"
            raise CellError("data", f"table '{name}' not found; tables in this session: {names}",
                            *lang.template.position_in(stmt, name))
        return table

    def source_context(self) -> SourceContext:
        from console.sources import SourceContext

        # Not the data dir itself (it holds the store and the secret key): only its lake, which
        # SourceContext always allows, and this session's own cache.
        return SourceContext(self.cfg.data_dir, self.connections, [Path(p) for p in self.cfg.DATA_ROOTS or []],
                             own_roots=[self.cache_dir], variables=self.variables_view())

    def _run_load(self, stmt: lang.Load, run: CellRun, cell: Any) -> None:
        from console.kernel.origins import record_load
        from console.sources import SourceError, get_source
        from console.sources.delta import watching

        source, ctx = get_source(stmt.format), self.source_context()
        options = replaying.load_options(self.replay, stmt.format, stmt.path, dict(stmt.options))
        table: Entry
        with watching() as versions:
            dataset = source.dataset(ctx, stmt.path, options)
            if dataset is None:
                table = source.read(ctx, stmt.path, options)
            else:
                try:  # the footers only: row count, schema, sizes
                    table = LazyTable(dataset, f"{stmt.format} {stmt.path}")
                except (OSError, pa.ArrowInvalid) as exc:
                    raise SourceError(f"cannot read {stmt.format} from {stmt.path}: {exc}") from exc
        self._record_io(run, stmt, "read", versions, ctx)
        self.put(stmt.table, table, run)
        self.origins[stmt.table] = record_load(ctx, stmt.format, stmt.path, options, table)

    def _run_select(self, stmt: lang.Select, run: CellRun, cell: Any) -> None:
        from console.kernel.sqlengines.router import run_select

        table = run_select(self, stmt.sql, stmt.sql_line, stmt.sql_column, stmt.table)  # DuckDB, or Daft on the cluster
        self.put(stmt.table, table, run)
        if isinstance(table, DistributedTable):  # a Python cell's actors read its files (direct reads)
            from console.kernel.sqlengines.distributed import origin

            self.origins[stmt.table] = origin(table)

    def _run_save(self, stmt: lang.Save, run: CellRun, cell: Any) -> None:
        from console.sources import get_source

        entry = self.tables.entry(stmt.table)
        if isinstance(entry, DistributedTable) and not entry.loaded:  # written by the cluster, not the kernel
            from console.kernel.sqlengines.distributed import cluster_save

            origins.read_before_overwrite(self.tables, self.source_context(), stmt)
            if cluster_save(self, entry, stmt):
                from console.kernel.manifest import delta_version

                # Written by the cluster's own deltalake: the table read again names the version
                self._record_io(run, stmt, "write", delta_version(self.source_context(), stmt.format, stmt.path))
                self._saved(stmt, entry.num_rows)
                return
        from console.sources.delta import watching

        table = self.require(stmt.table, stmt)
        source = get_source(stmt.format)
        origins.read_before_overwrite(self.tables, self.source_context(), stmt)
        ctx = self.source_context()
        with watching() as versions:
            source.write(ctx, table, stmt.path, stmt.mode, dict(stmt.options), list(stmt.partition_by))
        self._record_io(run, stmt, "write", versions, ctx)
        self._saved(stmt, table.num_rows)

    def _record_io(self, run: CellRun, stmt: lang.Load | lang.Save, access: str, versions: list[int],
                   ctx: SourceContext | None = None) -> None:
        """One manifest entry for a load (what it read) or a save (what it wrote)."""
        from console.kernel.manifest import entry

        made = entry(ctx or self.source_context(), stmt, access, versions, run.io.statement)
        if isinstance(stmt, lang.Save):
            made = provenance.on_write(made, self.derived.get(stmt.table.lower()))
        run.io.add(replaying.checked(self.replay, made))

    def _saved(self, stmt: lang.Save, num_rows: int) -> None:
        rows = f"{num_rows} row{'s' if num_rows != 1 else ''}"
        self.emit(Output(text=f"save {stmt.mode} {stmt.table} ({rows}) as {stmt.format}.`{stmt.path}`: done\n",
                              source="engine", stream="system"))

    def _run_set(self, stmt: lang.Set, run: CellRun, cell: Any) -> None:
        setvars.run_set(self, stmt)

    def _run_connect(self, stmt: lang.Connect, run: CellRun, cell: Any) -> None:
        self.connections[stmt.alias] = dict(stmt.options)

    def _run_pythonsetting(self, stmt: lang.PythonSetting, run: CellRun, cell: Any) -> None:
        target = self.python_env if stmt.scope == "env" else self.python_conf
        target[stmt.key] = stmt.value
        # As in MLSQL, the statement's result is the current env/conf table (not put in the catalog).
        run.last = (f"python_{stmt.scope}", pa.table({"key": list(target), "value": list(target.values())}))

    def _run_command(self, stmt: lang.Command, run: CellRun, cell: Any) -> None:
        commands.run_command(self, stmt, run)

    def _run_run(self, stmt: lang.Run, run: CellRun, cell: Any) -> None:
        if stmt.verb in ("train", "predict"):
            from console.kernel.ml import verbs

            verbs.run_verb(self, stmt, run)
            return
        if stmt.et not in ("Ray", "TableRepartition"):
            from console.kernel import extensions

            extensions.run_extension(self, stmt, run)
            return
        if stmt.et == "TableRepartition":
            name, table, num = python_jobs.repartition(self, stmt)
            self.put(name, table, run)
            self.partitions[name] = num
            return
        pairs = python_jobs.run_ray(self, stmt, self.python_runtime)
        # As Byzer means it: under dataMode=model a Python cell's output is the model it trained.
        run.trains = str(stmt.options.get("dataMode") or self.python_conf.get("dataMode", "")).lower() == "model"
        for name, table in pairs:
            self.put(name, table, run)
        if not pairs:  # a Python cell without --%output that built no result: no table to show
            run.last = None
            raise _PrintedOnly(stmt.options["autoOutput"])

    def python_runtime(self) -> PythonRuntime:
        if self._runtime is None:
            try:
                # Heavy (ray, worker processes): imported at the first Python cell only.
                from console.kernel.python_runtime import PythonRuntime
            except ImportError as exc:
                raise CellError("python", "Python cells need the Python runtime, which is not available: "
                                          f"{exc}") from None
            from console.kernel import userdirs

            self._runtime = PythonRuntime(self.cfg, self.emit, cluster=self.cluster,
                                          user_env=userdirs.folders(self.cache_dir))
        if not self._env_applied:  # until the layer is found or built: a failed try is tried again
            self.refresh_environment()
        return self._runtime

    def _run_include(self, stmt: lang.Include, run: CellRun, cell: Any) -> None:
        """Run another notebook's cells in this session; an error inside is reported at this statement."""
        name, cells = include.included_cells(stmt, self.notebook_loader, self._including, host=self)
        self._including.append(name)
        try:
            for c in cells:
                try:
                    self._execute(lang.parse_cell(c.source, c.where, c.kind), c.where, c.source, run)
                except (ParseError, CellError) as exc:
                    raise include.at_include(stmt, c, exc) from None
        finally:
            self._including.pop()

    def _run_register(self, stmt: lang.Register, run: CellRun, cell: Any) -> None:
        """register ScriptUDF (Python code), Ray (a deep-learning model on actors) or an algorithm's model."""
        et = stmt.et.lower()
        if et == "ray":
            from console.kernel import raydeploy

            raydeploy.register(self, stmt, run)
        elif et == "scriptudf":
            from console.kernel.ml import udf

            udf.register_script_udf(self, stmt, run)
        else:
            from console.kernel.ml import verbs

            verbs.register_model(self, stmt, run)


class _PrintedOnly(Exception):
    """A compiled Python cell's code built no result: skip the steps that mention its output name
    (console/lang/annotations.py)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name
