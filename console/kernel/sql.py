"""The SQL engine behind `select … as t`: Spark SQL transpiled by sqlglot, run by DuckDB over Arrow tables.

The translation keeps Spark's answers (console/kernel/sqlengines/duckdb.py); a select may run on
the session's Ray cluster instead (console/kernel/sqlengines/, docs/cluster-sql.md).

Kept lean on purpose (bench/sql_overhead.py holds it to <= 1.15x plain DuckDB): transpiles are
cached by SQL text, and catalog tables are registered with DuckDB (zero-copy) only when a query
names them and only again when the name points at a new table.
"""
from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from console.kernel.errors import CellError
from console.kernel.sqlengines.duckdb import transpile
from console.kernel.sqlengines.spark import Untranslatable

__all__ = ["SETTABLE", "SqlEngine", "transpile"]

_DUCKDB_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    # No network here, and a query must never fetch code: extensions stay as installed.
    "autoinstall_known_extensions": "false",
    "autoload_known_extensions": "false",
}
# Settings a cell may still change once the configuration is locked (`SET threads = 2`, or
# `set duckdb.threads = "2" where type="conf"`): tuning only, none of them reaches a file.
SETTABLE = ("threads", "memory_limit", "max_memory", "default_order", "default_null_order",
            "preserve_insertion_order", "timezone", "calendar", "default_collation", "integer_division",
            "max_expression_depth", "ordered_aggregate_threshold")


# DuckDB's "No function matches … 'sum(VARCHAR)'": the usual cause is a CSV read without
# inferSchema, where every column is text (Spark would cast silently).
_TEXT_ARGUMENT = re.compile(r"No function matches the given name and argument types '(\w+)\(([^)]*VARCHAR[^)]*)\)'")
_NUMERIC_FUNCTIONS = {"sum", "avg", "mean", "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp",
                      "var_pop", "median", "product", "sqrt", "abs", "round", "floor", "ceil", "log", "exp",
                      "power", "pow", "sum_no_overflow", "fsum", "kahan_sum", "corr", "covar_pop", "covar_samp"}


def locate(sql: str, offset: int, sql_line: int, sql_column: int) -> tuple[int, int]:
    """Cell line/column of character `offset` of a select whose text starts at sql_line/sql_column."""
    prefix = sql[:offset]
    newlines = prefix.count("\n")
    if newlines == 0:
        return sql_line, sql_column + offset
    return sql_line + newlines, offset - prefix.rfind("\n")


def find_word(sql: str, word: str) -> int:
    """Offset of the first whole-word, case-insensitive occurrence of `word` in sql, or -1."""
    m = re.search(r"(?<![\w.])`?" + re.escape(word) + r"`?(?!\w)", sql, re.IGNORECASE)
    return m.start() if m else -1


def untranslatable_error(exc: Untranslatable, sql: str, line: int, column: int) -> CellError:
    """The cell error for a construct an engine refuses, at the construct's first word."""
    word = re.search(r"(\w+)\(", exc.construct) or re.match(r"(?:the |an? )?(\w+)", exc.construct)
    at = find_word(sql, word.group(1)) if word else -1
    return CellError("sql", str(exc), *locate(sql, max(at, 0), line, column))


def _numeric(tables: Mapping[str, pa.Table], refs: tuple[str, ...]) -> frozenset[str]:
    """The numeric columns of the tables a select reads (schemas only: nothing is read)."""
    from console.kernel.sqlengines.spark import numeric_columns

    schemas = []
    for ref in refs:
        entry = tables.entry(ref) if hasattr(tables, "entry") else tables.get(ref)
        if entry is not None:
            schemas.append(entry.schema)
    return numeric_columns(schemas) if schemas else frozenset()


class SqlEngine:
    """One DuckDB connection per session; queries see the session's catalog of Arrow tables.

    The connection reaches no file outside `roots` (table functions such as read_csv, COPY,
    ATTACH, EXPORT, extensions): DuckDB's enable_external_access is off with the roots as its
    allowed_directories, and the configuration is locked so no statement can turn that back.
    temp_dir is where DuckDB may spill (none when not given); memory_limit (bytes) bounds what
    it holds in memory before it spills there (DuckDB's own default when not given).
    """

    def __init__(self, roots: Sequence[Path] = (), temp_dir: Path | None = None,
                 memory_limit: int | None = None) -> None:
        import duckdb

        self._duckdb = duckdb
        con = duckdb.connect(":memory:", config=_DUCKDB_CONFIG)
        try:
            # Order matters: allowed_directories cannot change once external access is off.
            con.execute("SET temp_directory = ?", [str(temp_dir) if temp_dir else ""])
            if memory_limit:
                con.execute("SET memory_limit = ?", [f"{max(memory_limit // 1024, 1024)}KiB"])
            con.execute("SET allowed_directories = ?", [[str(r).rstrip("/") + "/" for r in roots]])
            con.execute("SET allowed_configs = ?", [list(SETTABLE)])
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        except BaseException:
            con.close()
            raise
        self.con = con
        self.roots = [str(r) for r in roots]
        self._registered: dict[str, object] = {}  # a table or a dataset (catalog.scannable)
        # An interrupt is for the cell, not only for the query running at that instant: DuckDB's
        # own interrupt does nothing while no query runs, so one that came while a statement was
        # still being translated was lost and that statement then ran to its end (39 s in a test
        # on a loaded machine). The stop is kept until the next cell begins (`begin`), refuses a
        # query about to start, and is repeated while one runs; the lock keeps the repeat from
        # reaching a query of the next cell.
        self._guard = threading.Lock()
        self._stop = False
        self._busy = False

    def begin(self) -> None:
        """A new cell: an earlier interrupt is spent."""
        with self._guard:
            self._stop = False

    def interrupt(self) -> None:
        with self._guard:
            self._stop = True
            self.con.interrupt()
        threading.Thread(target=self._repeat_interrupt, name="duckdb-interrupt", daemon=True).start()

    def _repeat_interrupt(self, tries: int = 100, every: float = 0.05) -> None:
        gone = threading.Event()
        for _ in range(tries):  # 5 s: a query started in the gap is stopped within 50 ms
            with self._guard:
                if not self._stop:
                    return
                if self._busy:
                    self.con.interrupt()
            gone.wait(every)

    def _bind(self, refs: tuple[str, ...], tables: Mapping[str, pa.Table]) -> str | None:
        """Register the referenced tables; return the first name the catalog lacks.

        A loaded table still on disk is registered as its dataset: DuckDB scans it with
        projection and filters pushed down, and nothing is read into the catalog.
        """
        from console.kernel.catalog import scannable

        for ref in refs:
            # DuckDB (like Spark) matches names case-insensitively; scannable does too.
            table = scannable(tables, ref)
            if table is None:
                return ref
            if self._registered.get(ref) is not table:
                self.con.register(ref, table)
                self._registered[ref] = table
        return None

    def query(self, sql: str, tables: Mapping[str, pa.Table], line: int = 1, column: int = 1) -> pa.Table:
        """Run one Spark SQL select; errors become CellError(kind="sql") at cell line/column."""
        import sqlglot

        try:
            duck_sql, refs = transpile(sql)
            numeric = _numeric(tables, refs)
            if numeric:  # a second, cached translation that knows which columns are numbers
                duck_sql, refs = transpile(sql, numeric)
        except sqlglot.errors.ParseError as exc:
            err = exc.errors[0] if exc.errors else {}
            eline, ecol = err.get("line") or 1, err.get("col") or 1
            cell_line = line + eline - 1
            cell_col = column + ecol - 1 if eline == 1 else ecol
            desc = re.sub(r"<class '[\w.]+\.(\w+)'>", r"\1", err.get("description") or str(exc))
            near = (err.get("highlight") or "").strip()
            raise CellError("sql", f"SQL syntax error: {desc}" + (f" near {near!r}" if near else ""),
                            cell_line, cell_col) from None
        except Untranslatable as exc:  # before SqlglotError, which it is too
            raise untranslatable_error(exc, sql, line, column) from None
        except sqlglot.errors.SqlglotError as exc:
            raise CellError("sql", f"SQL error: {exc}", line, column) from None
        except Exception as exc:  # a statement sqlglot itself trips on: the user's, so said as theirs
            raise CellError("sql", f"SQL error: this statement could not be translated for DuckDB "
                            f"({type(exc).__name__}: {exc})", line, column) from None
        missing = self._bind(refs, tables)
        if missing is not None:
            names = ", ".join(sorted(tables)) or "none yet"
            at = find_word(sql, missing.split(".")[-1])
            raise CellError("sql", f"table '{missing}' not found; tables in this session: {names}",
                            *locate(sql, max(at, 0), line, column))
        with self._guard:
            if self._stop:
                raise CellError("interrupted", "the query was interrupted", line, column)
            self._busy = True
        try:
            result = self.con.sql(duck_sql).to_arrow_table()
        except self._duckdb.InterruptException:
            raise CellError("interrupted", "the query was interrupted", line, column) from None
        except self._duckdb.Error as exc:
            raise self._map_error(exc, sql, duck_sql, line, column) from None
        except (UnicodeError, ValueError, OverflowError) as exc:
            # DuckDB's own message or a value it hands back that Python cannot take (an error
            # quoting half a UTF-8 character): still this statement's error, not the kernel's.
            raise CellError("sql", f"DuckDB failed on this statement ({type(exc).__name__}: {exc})",
                            line, column) from None
        finally:
            with self._guard:
                self._busy = False
        if self._stop:  # stopped as it finished: the cell was interrupted all the same
            raise CellError("interrupted", "the query was interrupted", line, column)
        return result

    def scalar(self, sql: str, tables: Mapping[str, pa.Table], line: int = 1, column: int = 1) -> object:
        """The first value of the first row (None for an empty result), for `set … where type="sql"`."""
        result = self.query(sql, tables, line, column)
        if result.num_rows == 0 or result.num_columns == 0:
            return None
        return result.column(0)[0].as_py()

    def _map_error(self, exc: Exception, sql: str, duck_sql: str, line: int, column: int) -> CellError:
        # DuckDB's LINE/caret refer to the transpiled text, which the user never wrote: drop them and
        # point at the user's own text, by the quoted name in the message or the word at the caret.
        text = str(exc)
        message, _, context = text.partition("\n\nLINE ")
        at = -1
        first = message.split("\n")[0]
        candidates = re.findall(r'"([^"\n]+)"', first) + re.findall(r"with name (\w+)", first)
        for name in candidates:
            at = find_word(sql, name)
            if at >= 0:
                break
        for literal in ([] if at >= 0 else re.findall(r"'[^'\n]*'", first)):
            at = sql.find(literal)
            if at >= 0:
                break
        if at < 0 and context:
            lines = context.split("\n")
            # The caret line is aligned under "LINE n: …", whose "LINE " partition() removed.
            caret = (lines[1].find("^") - len("LINE ")) if len(lines) > 1 else -1
            prefix_len = len(lines[0]) - len(lines[0].split(": ", 1)[-1])
            word = re.match(r"\w+", lines[0][caret:]) if caret >= prefix_len else None
            if word:
                at = find_word(sql, word.group(0))
        message = message.strip().replace("\n", " ")
        text_arg = _TEXT_ARGUMENT.search(first)
        if text_arg and text_arg.group(1).lower() in _NUMERIC_FUNCTIONS:
            fn = text_arg.group(1)
            at = find_word(sql, fn)
            return CellError("sql", f"{fn}() needs numbers but got a text column ({fn}({text_arg.group(2)})). "
                             "A CSV loaded without inferSchema reads every column as text: load it with "
                             f'`where header="true" and inferSchema="true"`, or cast the column, e.g. '
                             f"{fn}(cast(col as double))", *locate(sql, max(at, 0), line, column))
        if isinstance(exc, self._duckdb.PermissionException):
            where = ", ".join(self.roots) or "no folder"
            message += f"; SQL reads and writes files only inside {where} (use load for other data)"
        elif "configuration has been locked" in message:
            message += f"; notebooks may change only {', '.join(SETTABLE)}"
        return CellError("sql", message, *locate(sql, max(at, 0), line, column))

    def register_function(self, name: str, fn: Callable[..., Any], params: list[Any], return_type: Any,
                          vectorized: bool = True) -> None:
        """Make a Python callable a SQL function (ScriptUDF, vec_*, a registered model), replacing one of the name.

        vectorized: fn takes and returns pyarrow arrays (one call per batch, not per row).
        Types are DuckDB type names ("DOUBLE[]") or duckdb types. Raises duckdb.Error on bad types.
        """
        try:
            self.con.remove_function(name)
        except self._duckdb.Error:
            pass  # not registered before
        from duckdb.func import FunctionNullHandling, PythonUDFType

        self.con.create_function(name, fn, params, return_type,
                                 type=PythonUDFType.ARROW if vectorized else PythonUDFType.NATIVE,
                                 null_handling=FunctionNullHandling.SPECIAL)

    def close(self) -> None:
        self.con.close()
