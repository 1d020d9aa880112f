"""Completion and hover for the editor, answered from the session's live catalog.

MLSQL: the statement around the cursor decides what fits (formats after `load`, options of the
format after `where`, columns of the tables a select reads, `${variables}` …). Python: jedi,
over the worker's live globals when a worker is up (python_runtime.complete), otherwise over the
cell's text alone. Both run on the kernel's command thread and only read the session.
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterable, Mapping


from console.coltypes import columns
from console.kernel import completion_byzer as byzer
from console.kernel.catalog import Entry
from console.kernel.host import SessionHost
from console.worker.complete import python_items

Item = dict[str, str]
MAX_ITEMS = 400

STATEMENTS = ("load", "select", "save", "set", "connect", "run", "train", "predict", "register", "include",
              "with")
COMMANDS = ("!show", "!desc", "!if", "!elif", "!else", "!fi", "!assert", "!python", "!ray", "!fs", "!sh",
            "!kill", "!profiler", "!pyInclude", "!cache", "!unCache", "!println", "!lastCommand",
            "!delta", "!hdfs")
SQL_KEYWORDS = ("select", "from", "where", "group by", "order by", "having", "limit", "join", "left join",
                "right join", "inner join", "full outer join", "cross join", "on", "as", "and", "or", "not",
                "in", "is null", "is not null", "like", "between", "case", "when", "then", "else", "end",
                "distinct", "union all", "union", "with", "over", "partition by", "asc", "desc", "cast",
                "lateral view", "explode")
SAVE_MODES = ("overwrite", "append", "errorIfExists", "ignore")
SET_OPTIONS = ("type", "mode")
# Options each format reads (console/sources/*: the option(...) calls), and the ones every
# `load`/`save` understands.
FORMAT_OPTIONS: dict[str, tuple[str, ...]] = {
    "csv": ("header", "inferSchema", "sep", "delimiter", "quote", "escape", "nullValue", "encoding", "multiLine"),
    "json": ("multiLine",),
    "text": ("wholetext", "encoding"),
    "parquet": ("compression",),
    "delta": ("versionAsOf", "timestampAsOf", "startingVersion", "endingVersion", "overwriteSchema",
              "mergeSchema"),
    "jdbc": ("url", "driver", "user", "password", "dbtable", "directQuery"),
    "binaryFile": ("pathGlobFilter",),
    "excel": ("sheetName", "header"),
}
COMMON_OPTIONS = ("fileNum", "partitionBy")
# Spark SQL names users bring from Byzer/Databricks; the transpiler maps them to DuckDB's.
SPARK_FUNCTIONS = ("abs", "array_contains", "avg", "cast", "ceil", "coalesce", "collect_list", "collect_set",
                   "concat", "concat_ws", "count", "current_date", "current_timestamp", "date_add", "date_format",
                   "date_sub", "datediff", "explode", "first", "floor", "from_unixtime", "get_json_object",
                   "if", "ifnull", "instr", "isnull", "last", "length", "lower", "max", "mean", "min",
                   "monotonically_increasing_id", "nvl", "percentile_approx", "posexplode", "rand", "regexp_extract",
                   "regexp_replace", "round", "row_number", "size", "split", "sqrt", "stddev", "substr",
                   "substring", "sum", "to_date", "to_timestamp", "trim", "unix_timestamp", "upper", "variance",
                   "year", "month", "dayofmonth", "hour", "minute", "second", "rank", "dense_rank", "lag", "lead")

_WORD = re.compile(r"[\w$]*$")
_STATEMENT_START = re.compile(r"^\s*(?:--[^\n]*\n\s*)*(\S+)", re.S)
_QUOTED = re.compile(r"'''.*?'''|\"\"\".*?\"\"\"|`[^`]*`|'[^'\n]*'|\"[^\"\n]*\"|--[^\n]*|/\*.*?\*/", re.S)


def complete(session: SessionHost, args: Mapping[str, Any]) -> dict[str, Any]:
    """args: source, cursor (offset), kind. Answer: {"from": offset, "to": offset, "items": [...]}."""
    source = args.get("source")
    if not isinstance(source, str):
        raise ValueError("complete needs 'source' (the cell's text)")
    cursor = args.get("cursor", len(source))
    if not isinstance(cursor, int) or not 0 <= cursor <= len(source):
        raise ValueError(f"'cursor' must be an offset between 0 and {len(source)}, got {cursor!r}")
    kind = args.get("kind") or "mlsql"
    if kind not in ("mlsql", "python", "sql"):
        raise ValueError(f"'kind' must be mlsql, python or sql, got {kind!r}")
    if kind == "python" or source.lstrip().startswith("--%python") or source.lstrip().startswith("#%python"):
        return complete_python(session, source, cursor)
    return complete_mlsql(session, source, cursor)


def inspect(session: SessionHost, args: Mapping[str, Any]) -> dict[str, Any]:
    """args: name (a table, or a statement, !command, algorithm or extension).

    Answer: {"name", "columns": [{"name", "type"}], "rows"} for a table of the session, else
    {"name", "doc"} for a word of the language (the editor's hover), else LookupError.
    """
    name = args.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("inspect needs 'name' (a table of the session)")
    table = _lookup(session, name)
    if table is None:
        doc = byzer.describe(name)
        if doc is not None:
            return {"name": name, "doc": doc}
        known = ", ".join(sorted(session.tables)) or "none yet"
        raise LookupError(f"no table {name!r} in this session; tables: {known}")
    return {"name": name, "rows": table.num_rows, "columns": columns(table.schema)}


def tables(session: SessionHost, args: Mapping[str, Any]) -> dict[str, Any]:
    """The session's tables for the data panel: {"tables": [{"name", "rows", "columns": [{"name", "type"}]}]}."""
    out = [{"name": name, "rows": t.num_rows, "columns": columns(t.schema)} for name, t in session.tables.entries()]
    return {"tables": out[:MAX_ITEMS]}


def variables(session: SessionHost, args: Mapping[str, Any]) -> dict[str, Any]:
    """The variable explorer: the session's tables and its Python globals (metadata, nothing computed).

    {"tables": [...as tables()...], "python": [{"name", "type", "size", "value"}] or null when no
    idle Python worker can say (none started yet, or a cell is running: the page keeps what it had)}.
    """
    runtime = getattr(session, "_runtime", None)  # only a runtime that exists: listing never starts one
    python = runtime.variables() if runtime is not None else None
    return {**tables(session, args), "python": python}


def file_schema(session: SessionHost, args: Mapping[str, Any]) -> dict[str, Any]:
    """The data panel's schema of a Parquet or Excel file of the lake, read as its `load` reads it
    (Parquet: the footer only), in Spark's type names: {"columns": [{"name", "type"}]}."""
    from console.sources import base

    path = args.get("path")
    if not isinstance(path, str) or not path or len(path) > 4096:
        raise ValueError("file_schema needs 'path' (a file of the lake)")
    fmt = {".parquet": "parquet", ".parq": "parquet", ".xlsx": "excel"}.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise ValueError(f"{path}: the session reads the schema of Parquet and Excel files")
    source, ctx = base.get_source(fmt), session.source_context()
    try:
        data = source.dataset(ctx, path, {})
        schema = data.schema if data is not None else source.read(ctx, path, {}).schema
    except base.SourceError as exc:  # a path outside the roots, no such file: said as the load says it
        from console.sources.paths import scrub

        if "cannot read" in exc.message:  # pyarrow's words inside name the file by its server path
            raise LookupError(f"{path} is not a readable {fmt} file") from None
        raise LookupError(scrub(ctx, exc.message)) from None
    except Exception:  # pyarrow's errors name the file by its server path: say it by the lake's
        raise LookupError(f"{path} is not a readable {fmt} file") from None
    return {"columns": columns(schema)}


# ---------------------------------------------------------------- MLSQL
def complete_mlsql(session: SessionHost, source: str, cursor: int) -> dict[str, Any]:
    before = source[:cursor]
    word = _WORD.search(before)
    start = word.start() if word else cursor
    if before[start - 1:start] == "!":  # a command's name is typed with its "!"
        start -= 1
    elif before[start - 1:start] == "-" and re.match(r"\s*!(?:fs|hdfs)\s", _current_statement(before[:start]), re.I):
        start -= 1  # !fs -ls: the dash is part of the operation
    typed = before[start:]
    statement = _current_statement(before[:start])
    masked = _mask(statement)
    tokens = masked.lower().split()
    last = tokens[-1] if tokens else ""
    head = tokens[0] if tokens else ""
    items: list[Item] = []

    # ${name}: typed "${na" or "$"
    dollar = before[:start].endswith("${") or typed.startswith("$")
    if dollar:
        from console.sources.paths import scrub

        start = before.rfind("$", 0, cursor)
        ctx = session.source_context()
        for name, value in sorted(session.variables_view().items()):
            # ${__cache_dir__} is the server's folder: shown as cache:, as every path a user sees.
            items.append({"label": "${" + name + "}", "type": "variable", "detail": _short(scrub(ctx, value))})
        return _answer(start, cursor, items, source[start:cursor])

    found = _byzer_context(session, before, cursor)
    if found is not None:
        return found

    # t.col
    dotted = re.search(r"([\w]+)\.$", before[:start])
    if dotted:
        table = _lookup(session, dotted.group(1))
        if table is not None:
            items += _columns(dotted.group(1), table)
            return _answer(start, cursor, items, typed)
        if head == "load" or head == "save":  # `load csv.` is a format and its path, nothing to offer
            return _answer(start, cursor, [], typed)

    if statement.strip() == "" or not tokens:  # the first word
        items += byzer.statement_items(STATEMENTS) + byzer.command_items(COMMANDS)
        return _answer(start, cursor, items, typed)

    fmt = _format_of(statement)
    if head in ("load", "connect") and len(tokens) == 1 or head == "save" and last == "as" and "where" not in tokens:
        items += [{"label": f, "type": "type", "detail": "format"} for f in _formats()]
    elif head == "save" and len(tokens) == 1:
        items += [{"label": m, "type": "keyword", "detail": "save mode"} for m in SAVE_MODES]
        items += _tables(session)
    elif head in ("load", "save", "connect") and ("where" in tokens or "options" in tokens) and last in (
            "where", "and", "options"):
        options = FORMAT_OPTIONS.get(fmt or "", ()) + COMMON_OPTIONS
        items += [{"label": o, "type": "property", "detail": f"{fmt} option" if fmt else "option"}
                  for o in options]
    elif head == "set" and last in ("where", "and"):
        items += [{"label": o, "type": "property", "detail": "set option"} for o in SET_OPTIONS]
    elif head in ("select", "with"):
        after = _mask(source[start:])
        end = after.find(";")
        items += _select_items(session, masked + " " + (after if end < 0 else after[:end]), last)
    elif head in byzer.ML_HEADS and (last == "as" and len(tokens) == 3 or head == "register" and len(tokens) == 1):
        items += byzer.module_items(head)
    elif head in ("run", "train", "predict", "!desc") and len(tokens) == 1:
        items += _tables(session)
    elif head.startswith("!") and len(tokens) == 1:
        items += byzer.subcommand_items(head)
    else:
        items += _tables(session)
        items += [{"label": k, "type": "keyword"} for k in ("as", "where", "and", "options", "partitionBy")]
    return _answer(start, cursor, items, typed)


def _byzer_context(session: SessionHost, before: str, cursor: int) -> dict[str, Any] | None:
    """Inside ``load FORMAT.`…``: lake tables or paths; after `where`/`and` of train/run/…: parameters
    (the word may be dotted, `fitParam.0.max`, and backquoted)."""
    statement = _current_statement(before)
    path = re.search(r"\b(?:load|as)\s+(\w+)\.`([^`]*)$", statement, re.I)
    if path and statement.count("`") % 2 == 1:
        partial = path.group(2)
        items = byzer.lake_items(session.source_context().lake, path.group(1), partial)
        return _answer(cursor - len(partial), cursor, items, partial)
    dotted = re.search(r"[\w.]*$", before)
    word = dotted.group(0) if dotted else ""
    start = cursor - len(word)
    prior = _current_statement(before[:start - 1] if before[start - 1:start] == "`" else before[:start])
    tokens = _mask(prior).lower().split()
    if tokens and tokens[0] in byzer.ML_HEADS and tokens[-1] in ("where", "and") and "where" in tokens:
        return _answer(start, cursor, byzer.param_items(byzer.module_of(prior), word), word)
    if tokens[:1] == ["!delta"] and len(tokens) == 2 and tokens[1] in ("history", "info", "vacuum", "compact"):
        return _answer(start, cursor, byzer.lake_items(session.source_context().lake, "delta", word), word)
    return None


def _select_items(session: SessionHost, statement: str, last: str) -> list[Item]:
    """In a select: after from/join the tables; elsewhere the columns of the tables it reads first."""
    if last in ("from", "join"):
        return _tables(session)
    read = re.findall(r"\b(?:from|join)\s+([\w]+)", statement, re.I)
    items: list[Item] = []
    seen: set[str] = set()
    for name in read:
        table = _lookup(session, name)
        if table is not None and name.lower() not in seen:
            seen.add(name.lower())
            items += _columns(name, table, boost=10)
    for name, table in session.tables.entries():
        if name.lower() not in seen:
            items += _columns(name, table, boost=0)
    items += _tables(session)
    items += _functions(session)
    items += [{"label": k, "type": "keyword"} for k in SQL_KEYWORDS]
    return items


def _current_statement(text: str) -> str:
    """The text of the statement the cursor is in: after the last `;` outside quotes."""
    masked = _mask(text)
    end = masked.rfind(";")
    return text[end + 1:] if end >= 0 else text


def _mask(text: str) -> str:
    """Quoted text and comments blanked out (same length), so their words and `;` do not count."""
    return _QUOTED.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1]
                       if len(m.group(0)) > 1 else " ", text)


def _format_of(statement: str) -> str | None:
    """The format a load/save/connect names: `load csv.`p`` -> csv; `save overwrite t as parquet.`p``."""
    m = re.search(r"\b(?:load|connect|as)\s+(\w+)\s*(?:\.|\s|$)", statement, re.I)
    if not m:
        return None
    lowered = m.group(1).lower()
    return next((f for f in _formats() if f.lower() == lowered), m.group(1))


def _formats() -> list[str]:
    from console.sources import known_formats

    return known_formats()


def _tables(session: SessionHost) -> list[Item]:
    return [{"label": name, "type": "class", "detail": f"table, {t.num_rows} rows"}
            for name, t in session.tables.entries()]


def _columns(name: str, table: Entry, boost: int = 0) -> list[Item]:
    items: list[Item] = []
    for field in table.schema:
        item = {"label": field.name, "type": "property", "detail": f"{name}: {field.type}"}
        if boost:
            item["boost"] = str(boost)
        items.append(item)
    return items


def _functions(session: SessionHost) -> list[Item]:
    names = dict.fromkeys(SPARK_FUNCTIONS)
    for name in _duckdb_functions(session):
        names.setdefault(name)
    return [{"label": n, "type": "function"} for n in names]


def _duckdb_functions(session: SessionHost) -> list[str]:
    """DuckDB's scalar and aggregate functions, asked once per engine (the list never changes in a session)."""
    engine = session.sql
    cached: list[str] | None = getattr(engine, "_completion_functions", None)
    if cached is None:
        rows = engine.con.sql("select distinct function_name from duckdb_functions() "
                              "where function_type in ('scalar', 'aggregate') and function_name not like '%\\_%' "
                              "escape '\\' and regexp_matches(function_name, '^[a-z]') order by 1").fetchall()
        cached = [r[0] for r in rows]
        engine._completion_functions = cached  # type: ignore[attr-defined]
    return cached


def _lookup(session: SessionHost, name: str) -> Entry | None:
    return session.tables.entry(name)  # not read: completion needs the schema only


def _short(value: str, width: int = 40) -> str:
    return value if len(value) <= width else value[:width - 1] + "…"


def _answer(start: int, cursor: int, items: Iterable[Item], typed: str) -> dict[str, Any]:
    """Items that start with what was typed (case-insensitively), without duplicates, capped."""
    lowered = typed.lower()
    out: list[Item] = []
    seen: set[tuple[str, str]] = set()
    for item in items:
        key = (item["label"], item.get("detail", ""))
        if key in seen or not item["label"].lower().startswith(lowered):
            continue
        seen.add(key)
        out.append(item)
        if len(out) >= MAX_ITEMS:
            break
    return {"from": start, "to": cursor, "items": out}


# ---------------------------------------------------------------- Python
def complete_python(session: SessionHost, source: str, cursor: int) -> dict[str, Any]:
    """jedi over the worker's globals when one is up, else over the cell text alone."""
    before = source[:cursor]
    line = before.count("\n") + 1
    column = cursor - (before.rfind("\n") + 1)
    word = re.search(r"\w*$", before)
    start = word.start() if word else cursor
    items: list[Item] | None = None
    runtime = getattr(session, "_runtime", None)  # only a runtime that exists: completing never starts one
    if runtime is not None:
        items = runtime.complete(source, line, column)
    if items is None:
        from console.kernel import userdirs

        userdirs.apply_to_kernel(session.cache_dir)  # before jedi's first import: a writable cache
        items = python_items(source, line, column, None)
    return _answer(start, cursor, items, before[start:])
