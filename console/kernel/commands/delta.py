"""`!delta`: history, info, vacuum and compact of a delta table, and the delta tables of the lake.

The table is named as load/save name it: `db.table` in the lake, or a path with `/` (confined
the same way, console/sources/delta.py).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from console import lang
from console.coltypes import from_delta
from console.kernel.commands.base import command, emit_text, fail, rows_table, usage
from console.kernel.host import CellRun, SessionHost
from console.sources import SourceError

_HELP = (("show tables", "the delta tables in the lake (db.table)"),
         ("history <table> [limit]", "the table's versions: when, which operation, with what parameters"),
         ("info <table>", "version, files, size, partition columns and schema"),
         ("vacuum <table> [retentionHours]", "delete files no version within the retention (default 168 h) uses"),
         ("compact <table>", "rewrite small files into bigger ones (a new version; the old files stay until vacuum)"),
         ("help", "this list"))


@command("delta", doc="delta tables: show tables, history, info, vacuum, compact (see !delta help)",
         example="!delta history ai_model.mnist_model;")
def delta(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    args = list(stmt.args)
    op = args[0].lower() if args else "help"
    try:
        if op == "help":
            run.show("delta_help", rows_table(["command", "does"], list(_HELP)))
        elif op == "show" and [a.lower() for a in args[1:]] == ["tables"]:
            run.show("delta_tables", _tables(session))
        elif op in ("history", "info", "vacuum", "compact") and len(args) >= 2:
            table, shown = _open(session, args[1])
            if op == "history":
                limit = _int(stmt, args[2]) if len(args) > 2 else None
                run.show(f"{shown}_history", _history(table.history(limit)))
            elif op == "info":
                run.show(f"{shown}_info", _info(table))
            elif op == "vacuum":
                hours = _int(stmt, args[2]) if len(args) > 2 else None
                removed = table.vacuum(retention_hours=hours, dry_run=False,
                                       enforce_retention_duration=hours is None or hours >= 168)
                emit_text(session, f"vacuum {shown}: removed {len(removed)} file(s)", "system")
                run.show(f"{shown}_vacuum", rows_table(["removed"], [(r,) for r in removed]))
            else:
                metrics = table.optimize.compact()
                rows = [(k, json.dumps(v, default=str) if isinstance(v, (dict, list)) else str(v))
                        for k, v in metrics.items()]
                emit_text(session, f"compact {shown}: now version {table.version()}", "system")
                run.show(f"{shown}_compact", rows_table(["metric", "value"], rows))
        else:
            raise usage(stmt, "use one of: " + "; ".join(f"!delta {h[0]}" for h in _HELP))
    except SourceError as exc:
        raise fail(stmt, f"!delta {op}: {exc.message}", args[1] if len(args) > 1 else None) from None
    except Exception as exc:  # deltalake's own errors (a protocol it cannot write, a bad retention …)
        if type(exc).__module__.split(".")[0] != "deltalake" and not isinstance(exc, (ValueError, OSError)):
            raise
        raise fail(stmt, f"!delta {op}: {exc}") from None


def _int(stmt: lang.Command, text: str) -> int:
    if not text.isdigit():
        raise usage(stmt, f"expected a whole number, found {text!r}")
    return int(text)


def _open(session: SessionHost, name: str) -> tuple[Any, str]:
    from deltalake import DeltaTable

    from console.sources.delta import lake_location

    location, shown = lake_location(session.source_context(), name)
    if not DeltaTable.is_deltatable(str(location)):
        raise SourceError(f"delta table {shown} does not exist (looked in {location})")
    return DeltaTable(str(location)), shown


def _history(entries: list[dict[str, Any]]) -> pa.Table:
    rows = []
    for e in entries:
        params = e.get("operationParameters") or {}
        stamp = e.get("timestamp")
        rows.append((e.get("version"), stamp, e.get("operation"), json.dumps(params, default=str, sort_keys=True)))
    return rows_table(["version", "timestamp", "operation", "parameters"], rows,
                      {"version": pa.int64(), "timestamp": pa.timestamp("ms", tz="UTC")})


def _info(table: Any) -> pa.Table:
    meta = table.metadata()
    files = table.file_uris()
    size = sum(Path(f.removeprefix("file://")).stat().st_size for f in files if Path(f.removeprefix("file://")).exists())
    rows = [("version", str(table.version())), ("files", str(len(files))), ("bytes", str(size)),
            ("partition_columns", ", ".join(meta.partition_columns)),
            ("schema", ", ".join(f"{f['name']} {from_delta(f['type'])}"  # Spark's names, as the data panel
                                 for f in json.loads(table.schema().to_json()).get("fields", [])))]
    return rows_table(["name", "value"], rows)


def _tables(session: SessionHost) -> pa.Table:
    from console.sources.paths import shown

    ctx = session.source_context()
    rows = []
    if ctx.lake.is_dir():
        for log in sorted(ctx.lake.glob("*/*/_delta_log")):
            db, table = log.parent.parent.name, log.parent.name
            rows.append((f"{db}.{table}", shown(ctx, log.parent)))  # lake:db/table
    return rows_table(["name", "path"], rows)
