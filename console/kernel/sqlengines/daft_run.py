"""One translated select run by Daft, whatever runs Daft: the driver on Ray (cluster_driver.py) or
Daft's native runner in this process (the parity harness, tests/spark/cluster_harness.py).

`answer(request)` takes the driver's request (cluster_driver.py says its fields), builds the input
frames, the inline tables (a statement's VALUES) and the DuckDB functions the translation asks for
(daft_duck.py), runs the Daft SQL and has Daft write the result as parquet into `out_dir`. It
answers {"files": …, "partitions": …}, or {"error": text}: with "cannot_run": true when Daft (or
DuckDB inside it) refused or failed the statement, which the kernel says as "the cluster cannot
run …" (daft_errors.py); without it for a fault of ours, which the harness counts as internal.
"""
from __future__ import annotations

from typing import Any


class DaftFailed(Exception):
    """Daft refused or failed the statement: planning it, or running it on its workers."""


def answer(request: dict[str, Any]) -> dict[str, Any]:
    try:
        return execute(request)
    except DaftFailed as exc:
        return {"error": message(exc.__cause__ or exc), "cannot_run": True}
    except Exception as exc:
        return {"error": message(exc)}


def execute(request: dict[str, Any]) -> dict[str, Any]:
    import daft

    from console.kernel.sqlengines import daft_udf

    frames = {name: _frame(spec) for name, spec in request["tables"].items()}
    try:
        frames.update(daft_udf.inline_tables(request.get("values") or {}))
        daft_udf.attach(request.get("functions") or {}, request["sql"])
        df = daft.sql(request["sql"], register_globals=False, **frames)
        if request.get("delta"):
            df = _microseconds(df)
        # Daft's native parquet writer (its Python writers import pyiceberg, which 0.7.26 lacks); the
        # answer lists the files in partition order, which is the result's order (a sort's too), and
        # an empty result still gets one file with the schema.
        keys = list(request.get("partition_by") or [])
        written = df.write_parquet(request["out_dir"], write_mode="append",
                                   partition_cols=[daft.col(k) for k in keys] or None).to_pydict()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # Daft's Rust panics come as pyo3's PanicException, a BaseException
        raise DaftFailed(str(exc)) from exc
    files = [str(f) for f in written.get("path", [])]
    # Hive folders (key=value/, values escaped, null as __HIVE_DEFAULT_PARTITION__); each file's
    # values as Delta writes them in its log.
    values = [{k: _partition_text(written[k][i]) for k in keys} for i in range(len(files))] if keys else []
    return {"files": files, "partitions": values}


def _frame(spec: dict[str, Any]) -> Any:
    import daft
    import pyarrow as pa

    if "files" in spec:
        return daft.read_parquet(spec["files"])
    if "groups" in spec:
        return _partitioned(spec)
    with pa.memory_map(spec["ipc"]) as source:
        return daft.from_arrow(pa.ipc.open_file(source).read_all())


def _partitioned(spec: dict[str, Any]) -> Any:
    """A partitioned table (delta, hive folders): each group's files with its partition values as
    columns of the table's types, in the table's column order, the groups one after another."""
    import daft
    import pyarrow as pa

    frames = []
    for group in spec["groups"]:
        df = daft.read_parquet(group["files"])
        for column, value in group["values"].items():
            arrow = pa.type_for_alias(spec["types"][column].replace("[day]", ""))
            df = df.with_column(column, daft.lit(value).cast(daft.DataType.from_arrow_type(arrow)))
        frames.append(df.select(*spec["columns"]))
    out = frames[0]
    for df in frames[1:]:
        out = out.concat(df)
    return out


def _partition_text(value: Any) -> str | None:
    import datetime as dt

    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (bytes, bytearray)):
        raise ValueError("a binary partitionBy column cannot be saved from the cluster")
    return str(value)


def _microseconds(df: Any) -> Any:
    """Timestamp columns in microseconds (a Delta table holds no other unit)."""
    import daft

    for field in df.schema():
        kind = field.dtype
        if str(kind).startswith("Timestamp[") and not str(kind).startswith("Timestamp[us"):
            tz = kind.timezone
            df = df.with_column(field.name, daft.col(field.name).cast(daft.DataType.timestamp("us", tz)))
    return df


def message(exc: BaseException) -> str:
    """The cause's own words: a Ray task error's last line, without colours or the remote traceback,
    without DuckDB's quote of the SQL it ran (ours, not the user's), and with the schemas Daft
    draws as boxes across lines said in one: (k Int32, s Utf8)."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    text = re.sub(r"\n\s*LINE \d+:.*?\n\s*\^+", "", text, flags=re.DOTALL)
    text = re.sub(r"\s*╭[^╯]*╯\s*", _schema_text, text).replace(") ,", "),")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:2000]


def _schema_text(match: Any) -> str:
    """A table Daft drew (a header row, then one row per column) as ` (name type, …) `."""
    rows = [[cell.strip(" │") for cell in line.strip().split("┆")] for line in match.group(0).splitlines()
            if line.strip().startswith("│")]
    return " (" + ", ".join(" ".join(row) for row in rows[1:]) + ") "
