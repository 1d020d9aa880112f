"""`!assert` and Byzer's data-quality variants, and `!throw`.

`!assert t ''' :v > 0 ''' "message";` fails the cell with the message unless every row of t
satisfies the expression (`:v` is t's column v). `!assert name in __set__ "message";` fails unless
the variable name is set. The Byzer variants check columns: assertNotNull, assertUniqueKey (each
column unique), assertUniqueKeys (the columns together unique), assertCondition (a plain SQL
expression); without `Throw` they return the offending rows as the cell's result, with `Throw`
they fail when there are any.
"""
from __future__ import annotations

import pyarrow as pa

from console import lang
from console.kernel.commands.base import command, fail, quote_ident, rows_table, usage
from console.kernel.commands.placeholders import expand
from console.kernel.host import CellRun, SessionHost


@command("assert", doc="fail unless every row of a table satisfies an expression (`:col` is a column), "
                       "or unless a variable is set (`name in __set__`)",
         example="!assert counts ''' :n > 0 ''' \"counts must not be empty\";")
def assert_rows(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    args = stmt.args
    if len(args) >= 3 and args[1].lower() == "in" and args[2] == "__set__":
        if args[0] not in session.variables_view():
            message = args[3].strip() if len(args) > 3 else f"variable {args[0]} is not set"
            raise fail(stmt, message, args[0])
        return
    if len(args) not in (2, 3):
        raise usage(stmt, "use !assert <table> '''<expression>''' \"<message>\"; or !assert <name> in __set__ "
                          "\"<message>\";")
    name, expression = args[0], args[1]
    table = session.require(name, stmt)
    _check_columns(stmt, table, _placeholders(expression), name)
    condition = expand(expression, lambda col, _o: quote_ident(col))
    bad = _count(session, stmt, name, condition, expression)
    if bad:
        detail = f"{bad} of {table.num_rows} rows of {name} fail {expression.strip()}"
        raise fail(stmt, f"{args[2].strip()} ({detail})" if len(args) == 3 else f"assertion failed: {detail}")


@command("throw", doc="fail the cell with a message", example="!throw \"stop here\";")
def throw(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    raise fail(stmt, " ".join(stmt.args).strip() or "!throw")


def _placeholders(expression: str) -> list[str]:
    found: list[str] = []

    def note(name: str, _offset: int) -> str:
        found.append(name)
        return name

    expand(expression, note)
    return found


def _count(session: SessionHost, stmt: lang.Command, name: str, condition: str, shown: str) -> int:
    sql = f"select count(*) as n from {quote_ident(name)} where not coalesce(({condition}), false)"
    value = session.sql.scalar(sql, session.tables, *lang.template.position_in(stmt, shown.strip()[:30]))
    return value if isinstance(value, int) else 0


def _check_columns(stmt: lang.Command, table: pa.Table, columns: list[str], name: str) -> None:
    have = {c.lower() for c in table.column_names}
    for col in columns:
        if col.lower() not in have:
            raise fail(stmt, f"table {name} has no column {col}; its columns: {', '.join(table.column_names)}",
                       col)


def _fields(stmt: lang.Command, table: pa.Table, name: str) -> list[str]:
    if len(stmt.args) != 2:
        raise usage(stmt, f"use !{stmt.name} <table> 'column1,column2';")
    columns = [c.strip() for c in stmt.args[1].split(",") if c.strip()]
    if not columns:
        raise usage(stmt, "name at least one column")
    _check_columns(stmt, table, columns, name)
    return columns


def _report(session: SessionHost, stmt: lang.Command, run: CellRun, result: pa.Table, what: str) -> None:
    if stmt.name.lower().endswith("throw"):
        if result.num_rows:
            raise fail(stmt, f"{stmt.args[0]}: {result.num_rows} {what}")
        return
    run.show(f"{stmt.args[0]}_{stmt.name}", result)


@command("assertNotNull", "assertNotNullThrow",
         doc="rows where any of the columns is null (…Throw: fail if there are any)",
         example="!assertNotNull people 'name,age';")
def assert_not_null(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    name = stmt.args[0] if stmt.args else ""
    table = session.require(name, stmt)
    columns = _fields(stmt, table, name)
    where = " or ".join(f"{quote_ident(c)} is null" for c in columns)
    result = session.sql.query(f"select * from {quote_ident(name)} where {where}", session.tables,
                               stmt.line, stmt.column)
    _report(session, stmt, run, result, f"rows with nulls in {', '.join(columns)}")


@command("assertUniqueKey", "assertUniqueKeyThrow",
         doc="the columns that hold a value twice, each column on its own (…Throw: fail if any)",
         example="!assertUniqueKey people 'id';")
def assert_unique_key(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    name = stmt.args[0] if stmt.args else ""
    table = session.require(name, stmt)
    rows = []
    for col in _fields(stmt, table, name):
        sql = (f"select count(*) as n from (select {quote_ident(col)} from {quote_ident(name)} "
               f"group by {quote_ident(col)} having count(*) > 1) d")
        repeated = session.sql.scalar(sql, session.tables, stmt.line, stmt.column)
        if repeated:
            rows.append((col, repeated))
    result = rows_table(["column", "repeated_values"], rows, {"repeated_values": pa.int64()})
    _report(session, stmt, run, result, "columns are not unique: " + ", ".join(str(r[0]) for r in rows))


@command("assertUniqueKeys", "assertUniqueKeysThrow",
         doc="value combinations of the columns that occur more than once (…Throw: fail if any)",
         example="!assertUniqueKeys people 'name,city';")
def assert_unique_keys(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    name = stmt.args[0] if stmt.args else ""
    table = session.require(name, stmt)
    cols = ", ".join(quote_ident(c) for c in _fields(stmt, table, name))
    result = session.sql.query(f"select {cols}, count(*) as occurrences from {quote_ident(name)} group by {cols} "
                               f"having count(*) > 1", session.tables, stmt.line, stmt.column)
    _report(session, stmt, run, result, "repeated key combinations")


@command("assertCondition", "assertConditionThrow",
         doc="rows that do not satisfy a SQL expression (…Throw: fail if any)",
         example="!assertCondition people 'age >= 0';")
def assert_condition(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    if len(stmt.args) != 2:
        raise usage(stmt, f"use !{stmt.name} <table> '<expression>';")
    name, expression = stmt.args
    session.require(name, stmt)
    result = session.sql.query(f"select * from {quote_ident(name)} where not coalesce(({expression}), false)",
                               session.tables, *lang.template.position_in(stmt, expression[:30]))
    _report(session, stmt, run, result, f"rows fail {expression.strip()}")
