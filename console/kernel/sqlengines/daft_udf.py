"""DuckDB inside Daft, on the workers: the functions the cluster's translation hands to DuckDB.

Daft does the relational work (scans, joins, groups, windows, sorts) on its workers; an
expression Daft lacks, or answers otherwise than Spark, is computed by DuckDB over each Arrow
batch inside a Daft batch function, as the local engine's translation of that expression
(daft_duck.py decides which and writes the DuckDB SQL in the kernel). So a function on the
cluster answers what the local engine answers, which the parity harness checks against Spark.

Two kinds, as the translation's request names them (`functions`: name -> spec):
- "row": `SELECT <expr> AS r FROM _args`, one value per row of the batch; `_args` holds the
  Daft arguments (`_a0`, `_a1`, …; a constant expression gets a column of NULLs for the count);
- "agg": an aggregate Daft lacks. Daft collects each group's arguments as a list of structs
  (`__collect`, a list aggregate), and DuckDB aggregates each list: `_rows` holds the lists'
  elements with `_g`, the list they came from; a group with no rows gets the aggregate of none.

The DuckDB connection reads no file and loads no extension (enable_external_access off, the
configuration locked): daft.py's rule that a cluster select reads only catalog tables holds
inside these functions too. This module is pickled by value into Daft's workers (the driver
registers it), so a node needs duckdb, pyarrow and daft, not this project.
"""
from __future__ import annotations

import base64
import threading
from typing import Any

_CONFIG: dict[str, str | int] = {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false",
                                 "threads": 1}


def connection() -> Any:
    """This thread's DuckDB: no files, no extensions, one thread (row order kept), UTC."""
    # kept on the thread, not in a module global: this module is pickled by value, and a
    # threading.local cannot be
    thread = threading.current_thread()
    con = getattr(thread, "_console_duckdb", None)
    if con is None:
        import duckdb

        con = duckdb.connect(":memory:", config=dict(_CONFIG))
        con.execute("SET TimeZone = 'UTC'")  # the cluster computes times in UTC (docs/cluster-sql.md)
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        thread._console_duckdb = con  # type: ignore[attr-defined]
    return con


def schema_text(schema: Any) -> str:
    """An Arrow schema as JSON-safe text (the request travels as a JSON line)."""
    return base64.b64encode(schema.serialize().to_pybytes()).decode()


def schema_of(text: str) -> Any:
    import pyarrow as pa

    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


def evaluate_rows(sql: str, schema: Any, arrays: list[Any], rows: int) -> Any:
    """The "row" function over one batch: DuckDB's answer as an array of the declared type."""
    import pyarrow as pa

    fields = list(schema)[:-1]
    if fields:
        table = pa.table({f.name: _as(a, f.type, rows) for f, a in zip(fields, arrays, strict=True)})
    else:
        table = pa.table({"_n": pa.nulls(rows)})
    out = run(sql, {"_args": table}).column(0)
    return _as(out, schema.field(len(fields)).type, rows)


def evaluate_groups(sql: str, none_sql: str, schema: Any, lists: Any) -> Any:
    """The "agg" function over one batch of collected groups (a list of structs per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lists = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
    fields = list(schema)[:-1]
    out_type = schema.field(len(fields)).type
    flat = lists.flatten()
    columns = {"_g": pc.list_parent_indices(lists)}
    for i, f in enumerate(fields):
        columns[f.name] = _as(flat.field(i), f.type, len(flat))
    rows = pa.table(columns)
    grouped = run(sql, {"_rows": rows})
    none = run(none_sql, {"_rows": rows.schema.empty_table()}).column(0)
    # each group's row of `grouped`; a group with no rows takes the aggregate of none (the last)
    where = {g: i for i, g in enumerate(grouped.column(0).to_pylist())}
    index = pa.array([where.get(g, grouped.num_rows) for g in range(len(lists))], pa.int64())
    values = pa.concat_arrays([_as(grouped.column(1), out_type, grouped.num_rows), _as(none, out_type, 1)])
    return values.take(index)


def run(sql: str, tables: dict[str, Any]) -> Any:
    con = connection()
    for name, table in tables.items():
        con.register(name, table)
    try:
        return con.sql(sql).to_arrow_table()
    finally:
        for name in tables:
            con.unregister(name)


def _as(values: Any, kind: Any, rows: int) -> Any:
    """`values` as one array of type `kind` (a literal argument comes as one value: repeated)."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    if pa.types.is_null(kind):
        return pa.nulls(rows)
    if len(values) == 1 and rows != 1:
        values = pa.repeat(values[0], rows) if hasattr(pa, "repeat") else pa.array([values[0].as_py()] * rows,
                                                                                    values.type)
    return values if values.type == kind else values.cast(kind)


def function(name: str, spec: dict[str, Any]) -> Any:
    """The Daft batch function for one spec (see the module's docstring)."""
    import daft

    schema = schema_of(spec["schema"])
    returns = daft.DataType.from_arrow_type(schema.field(len(schema) - 1).type)
    if spec["kind"] == "agg":
        sql, none_sql = spec["sql"], spec["none_sql"]

        def groups(lists: Any) -> Any:
            return daft.Series.from_arrow(evaluate_groups(sql, none_sql, schema, lists.to_arrow()), name=name)

        return daft.func.batch(return_dtype=returns)(groups)
    sql = spec["sql"]

    def rows(*series: Any) -> Any:
        count = max((len(s) for s in series), default=0)
        return daft.Series.from_arrow(evaluate_rows(sql, schema, [s.to_arrow() for s in series], count), name=name)

    return daft.func.batch(return_dtype=returns)(rows)


class _Collect:
    """`__collect(a, b, …)` in the translated SQL: each group's arguments as a list of structs
    (`_a0`, `_a1`, …; NULLs kept: the aggregate in DuckDB decides what they count)."""

    name = "__collect"

    def __call__(self, *args: Any) -> Any:
        from daft.functions import to_struct

        return to_struct(*[a.alias(f"_a{i}") for i, a in enumerate(args)]).list_agg()


class _FrameValue:
    """`__first_value(x)`/`__last_value(x)` in the translated SQL (daft_windows.py): Daft's window
    functions of those names, which its SQL does not name (the OVER clause gives the frame)."""

    def __init__(self, last: bool) -> None:
        self.last = last
        self.name = "__last_value" if last else "__first_value"

    def __call__(self, value: Any) -> Any:
        return value.last_value() if self.last else value.first_value()


def attach(functions: dict[str, dict[str, Any]], sql: str = "") -> None:
    """Make the request's functions (and `__collect`, and the frame values `sql` calls) callable by
    name in this session's SQL."""
    import daft

    for last in (False, True):
        helper = _FrameValue(last)
        if helper.name in sql.lower():
            daft.attach_function(helper, helper.name)  # type: ignore[arg-type]
    if not functions:
        return
    _by_value()
    daft.attach_function(_Collect(), "__collect")  # type: ignore[arg-type]
    for name, spec in functions.items():
        daft.attach_function(function(name, spec), name)


def _by_value() -> None:
    """Pickle this module's functions by value (Daft's pickler for its UDF processes, Ray's for its
    workers), so a node that has duckdb, pyarrow and daft runs them without this project."""
    import importlib
    import sys

    module = sys.modules[__name__]
    for pickler in ("daft.pickle.cloudpickle", "ray.cloudpickle"):
        try:
            importlib.import_module(pickler).register_pickle_by_value(module)
        except Exception:  # that pickler is not there (no Ray in the harness): nothing to register
            pass


def inline_tables(values: dict[str, str]) -> dict[str, Any]:
    """The statement's VALUES, made by DuckDB as the local engine reads them (their types too)."""
    import daft

    return {name: daft.from_arrow(_typed_nulls(run(sql, {}))) for name, sql in values.items()}


def _typed_nulls(table: Any) -> Any:
    """A column of NULLs only (VALUES (NULL), (NULL)) as INT: Daft has no sum or compare of its Null type."""
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if pa.types.is_null(field.type):
            table = table.set_column(i, field.name, pa.nulls(table.num_rows, pa.int32()))
    return table
