"""Commands that show: `!show …`, `!desc`, `!println`, `!lastCommand`, `!lastTableName`, `!emptyTable`."""
from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from console import lang
from console.coltypes import from_arrow
from console.kernel.commands.base import COMMANDS, command, fail, rows_table, usage
from console.kernel.host import CellRun, SessionHost

SHOW_TOPICS = ("tables", "jobs", "datasources", "et", "et/<Name>", "et/params/<Name>", "functions",
               "function/<name>", "variables", "commands", "version")


@command("show", doc="tables, jobs, datasources, et, et/<Name>, functions, variables, commands or version "
                     "as a table", example="!show tables;")
def show(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    if len(stmt.args) != 1:
        raise usage(stmt, "shows one of: " + ", ".join(SHOW_TOPICS))
    topic = stmt.args[0].strip()
    key = topic.lower()
    if key == "tables":
        rows = [(n, t.num_rows, ", ".join(f"{f.name} {f.type}" for f in t.schema)) for n, t in
                session.tables.entries()]
        run.show("tables", rows_table(["name", "rows", "columns"], rows, {"rows": pa.int64()}))
    elif key == "jobs":
        # One cell runs at a time in a session: the only job is this one.
        run.show("jobs", rows_table(["session", "statement", "status"],
                                    [(session.session_id, stmt.source, "running")]))
    elif key == "datasources":
        from console.sources import base

        run.show("datasources", rows_table(["name"], [(n,) for n in base.known_formats()]))
    elif key == "et" or key.startswith("et/"):
        _show_extensions(stmt, run, topic)
    elif key == "functions" or key.startswith("function/"):
        _show_functions(session, stmt, run, topic)
    elif key == "variables":
        view = session.variables_view()
        rows = [(k, str(view[k]), "set" if k in session.variables else "built-in")
                for k in sorted(view) if not k.startswith("__")]
        run.show("variables", rows_table(["name", "value", "kind"], rows))
    elif key == "commands":
        rows = [(f"!{s.name}", s.doc, s.example) for s in sorted(COMMANDS.values(), key=lambda s: s.name.lower())]
        run.show("commands", rows_table(["command", "doc", "example"], rows))
    elif key == "version":
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("mlsql-console")
        except PackageNotFoundError:
            v = "unknown"
        run.show("version", rows_table(["name", "version"], [("MLSQL Console for Python", v)]))
    else:
        raise fail(stmt, f"!show knows no {topic!r}; it shows: {', '.join(SHOW_TOPICS)}", topic, kind="parse")


def _catalog(stmt: lang.Command) -> list[dict[str, Any]]:
    from console.kernel import extensions

    catalog = getattr(extensions, "catalog", None)
    if catalog is None:
        raise fail(stmt, "the catalog of extensions and algorithms is not available in this build", kind="kernel")
    return list(catalog())


def _show_extensions(stmt: lang.Command, run: CellRun, topic: str) -> None:
    entries = _catalog(stmt)
    parts = topic.split("/")
    if len(parts) == 1:
        rows = [(e["name"], e["kind"], e["doc"]) for e in entries]
        run.show("et", rows_table(["name", "kind", "doc"], rows))
        return
    wanted = parts[-1]
    entry = next((e for e in entries if str(e["name"]).lower() == wanted.lower()), None)
    if entry is None:
        import difflib

        names = [str(e["name"]) for e in entries]
        close = difflib.get_close_matches(wanted, names, n=1)
        hint = f"; did you mean {close[0]}?" if close else f"; there are: {', '.join(names)}"
        raise fail(stmt, f"no extension or algorithm named {wanted!r}{hint}", wanted)
    if len(parts) == 2 or (len(parts) == 3 and parts[1].lower() == "params"):
        params = [(p["name"], p.get("doc", "")) for p in entry.get("params", [])]
        run.show(str(entry["name"]), rows_table(["param", "doc"], params))
        return
    raise usage(stmt, "use !show et, !show et/<Name> or !show \"et/params/<Name>\"")


def _show_functions(session: SessionHost, stmt: lang.Command, run: CellRun, topic: str) -> None:
    sql = ("select function_name as name, min(function_type) as type, "
           "min(coalesce(description, '')) as description from duckdb_functions() "
           "where not internal or function_name not like '\\_%' escape '\\' group by function_name")
    try:
        result = session.sql.con.sql(sql).to_arrow_table()
    except Exception as exc:  # the catalog query is ours; if DuckDB refuses it, say so
        raise fail(stmt, f"cannot list the functions: {exc}", kind="sql") from None
    result = result.sort_by("name")
    if "/" in topic:
        wanted = topic.split("/", 1)[1].strip().lower()
        names = result.column("name").to_pylist()
        keep = [i for i, n in enumerate(names) if str(n).lower() == wanted]
        if not keep:
            raise fail(stmt, f"no function named {wanted!r}", wanted)
        result = result.take(pa.array(keep))
    run.show("functions", result)


@command("desc", doc="the columns of a table and their types (`json` adds the Arrow schema as JSON)",
         example="!desc people;")
def desc(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    if not stmt.args or len(stmt.args) > 2:
        raise usage(stmt, "use !desc <table> [json];")
    name = stmt.args[0]
    table = session.require(name, stmt)
    if len(stmt.args) == 2:
        fields = [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in table.schema]
        run.show(f"{name}_schema", rows_table(["schema"], [(json.dumps({"fields": fields}),)]))
        return
    rows = [(f.name, from_arrow(f.type), f.nullable) for f in table.schema]  # Spark's names, as Byzer shows
    run.show(f"{name}_columns", rows_table(["col_name", "data_type", "nullable"], rows, {"nullable": pa.bool_()}))


@command("println", doc="print text to the cell's output", example="!println '''loaded ${n} rows''';")
def println(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    from console.kernel.commands.base import emit_text

    emit_text(session, " ".join(stmt.args) + "\n")


@command("lastCommand", doc="the result of the statement before it; `named t` keeps it as table t",
         example="!fs -ls data;\n!lastCommand named files;")
def last_command(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    args = [a for a in stmt.args]
    if args and not (len(args) == 2 and args[0].lower() == "named"):
        raise usage(stmt, "use !lastCommand; or !lastCommand named <table>;")
    if run.last is None:
        raise fail(stmt, "no statement before !lastCommand in this cell has a result")
    if args:
        session.put(args[1], run.last[1], run)


@command("lastTableName", doc="set the variable __last_table_name__ to the name of the cell's last table",
         example="select 1 as a as t1;\n!lastTableName;")
def last_table_name(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    if run.last is None:
        raise fail(stmt, "no statement before !lastTableName in this cell has a result")
    session.variables["__last_table_name__"] = run.last[0]


@command("emptyTable", doc="end the cell without a result table", example="!emptyTable;")
def empty_table(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    run.last = None
