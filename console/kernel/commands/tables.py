"""`!cache` / `!uncache` and `!tableRepartition`.

Byzer's `!cache t` asks Spark to keep a lazily computed table in memory. Here every table is
already computed and held as Arrow, so `!cache t` does what is still worth doing: it writes t to
this session's cache folder (`<data_dir>/cache/<session>/tables/t.parquet`), where it survives a
kernel restart and can be loaded back with `load parquet.`${__cache_dir__}/tables/t.parquet` as t`.
The lifetime argument Byzer takes (script, session, application) is accepted; the file stays
until `!uncache t`.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from console import lang
from console.kernel.commands.base import command, emit_text, fail, named_args, rows_table, usage
from console.kernel.host import CellRun, SessionHost
from console.sources import paths

_LIFETIMES = ("script", "session", "application")


def cached_path(session: SessionHost, name: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "_-." else "_" for ch in name)
    return session.cache_dir / "tables" / f"{safe}.parquet"


@command("cache", doc="write a table to the session's cache folder (survives a kernel restart)",
         example="!cache people session;")
def cache(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    import pyarrow.parquet as pq

    if not stmt.args or len(stmt.args) > 2 or (len(stmt.args) == 2 and stmt.args[1].lower() not in _LIFETIMES):
        raise usage(stmt, "use !cache <table> [script|session|application];")
    name = stmt.args[0]
    table = session.require(name, stmt)
    path = cached_path(session, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    pq.write_table(table, partial)
    partial.replace(path)  # a reader never sees half a file
    shown = paths.shown(session.source_context(), path)  # cache:tables/t.parquet, never the server's folder
    emit_text(session, f"cached {name} ({table.num_rows} rows) in {shown}", "system")
    run.show("cache", rows_table(["table", "rows", "path"], [(name, table.num_rows, shown)],
                                 {"rows": pa.int64()}))


@command("uncache", doc="remove a table's file from the session's cache folder", example="!uncache people;")
def uncache(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    if len(stmt.args) != 1:
        raise usage(stmt, "use !uncache <table>;")
    path = cached_path(session, stmt.args[0])
    if not path.exists():
        cached = sorted(p.stem for p in path.parent.glob("*.parquet")) if path.parent.is_dir() else []
        raise fail(stmt, f"table {stmt.args[0]} is not cached (cached: {', '.join(cached) or 'none'})",
                   stmt.args[0])
    path.unlink()
    emit_text(session, f"uncached {stmt.args[0]}", "system")


@command("tableRepartition", doc="see a table as N partitions for Python jobs (run … as TableRepartition)",
         example="!tableRepartition _ -i people -num 4 -o people4;")
def table_repartition(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    from console.kernel import python_jobs

    args = list(stmt.args)
    if args and args[0] == "_":
        named = named_args(stmt, args[1:])
        source, num, out = named.get("i"), named.get("num"), named.get("o")
    elif len(args) in (2, 3):
        source, num, out = args[0], args[1], args[2] if len(args) == 3 else None
    else:
        source = num = out = None
    if not source or not num:
        raise usage(stmt, "use !tableRepartition _ -i <table> -num <N> [-o <output>];")
    if not num.isdigit() or int(num) < 1:
        raise fail(stmt, f"the number of partitions must be a whole number >= 1, not {num!r}", num)
    as_run = lang.Run(input=source, et="TableRepartition", options={"partitionNum": num}, output=out or source,
                      line=stmt.line, column=stmt.column, offset=stmt.offset, source=stmt.source)
    name, table, parts = python_jobs.repartition(session, as_run)
    session.put(name, table, run)
    session.partitions[name] = parts
