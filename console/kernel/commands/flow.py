"""`!if … !then … !elif … !else … !fi`: Byzer's branches, with conditions decided by DuckDB.

A condition is Spark SQL text in which `:name` is the value of the variable `name`. It may start
with selects that bind new placeholders, `select split(:a, ",")[0] as :first; :first == "jack"`;
those variables hold until the matching `!fi` (and are seen as ${first} inside the branch), then
the earlier values come back. The session asks Flow.skips() before each statement; flow commands
are never skipped so nested `!if`s in a branch not taken still pair up with their `!fi`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from console import lang
from console.kernel.commands.base import at, command, fail, usage
from console.kernel.commands.placeholders import expand, literal, split_statements
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost

FLOW_COMMANDS = ("if", "then", "elif", "else", "fi")
_BIND = re.compile(r"\bas\s+:([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


@dataclass
class _Block:
    """One open !if: whether the code around it runs, the branch now running, and what it set."""
    outer: bool
    running: bool
    taken: bool
    line: int
    seen_else: bool = False
    saved: dict[str, str | None] = field(default_factory=dict)


class Flow:
    """The open !if blocks of the running cell."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []

    @property
    def running(self) -> bool:
        # A block runs only inside a running outer block, so the innermost one decides.
        return not self.blocks or self.blocks[-1].running

    def skips(self, stmt: lang.Statement) -> bool:
        """True when stmt sits in a branch not taken (flow commands themselves are never skipped)."""
        if isinstance(stmt, lang.Command) and stmt.name.lower() in FLOW_COMMANDS:
            return False
        return not self.running

    def unclosed(self) -> int | None:
        """The line of the innermost !if still open, if any."""
        return self.blocks[-1].line if self.blocks else None


def run_flow(session: SessionHost, stmt: lang.Command, run: CellRun, flow: Flow) -> None:
    name = stmt.name.lower()
    if name == "if":
        block = _Block(outer=flow.running, running=False, taken=not flow.running, line=stmt.line)
        flow.blocks.append(block)  # first, so the variables the condition binds are undone at !fi
        if block.outer:
            block.running = block.taken = _condition(session, stmt, block)
        return
    if not flow.blocks:
        raise fail(stmt, f"!{stmt.name} without an open !if", kind="parse")
    block = flow.blocks[-1]
    if name == "then":
        if stmt.args:
            raise usage(stmt, "takes no arguments (the condition goes after !if)")
    elif name == "elif":
        if block.seen_else:
            raise fail(stmt, "!elif after !else", kind="parse")
        if block.outer and not block.taken:
            block.running = block.taken = _condition(session, stmt, block)
        else:
            block.running = False
    elif name == "else":
        if block.seen_else:
            raise fail(stmt, f"a second !else for the !if on line {block.line}", kind="parse")
        block.seen_else = True
        block.running = block.outer and not block.taken
        block.taken = True
    else:  # fi
        flow.blocks.pop()
        for key, old in block.saved.items():
            if old is None:
                session.variables.pop(key, None)
            else:
                session.variables[key] = old


def _condition(session: SessionHost, stmt: lang.Command, block: _Block) -> bool:
    if len(stmt.args) != 1:
        raise usage(stmt, "takes one condition, e.g. !%s ''' :a == \"x\" ''';" % stmt.name)
    text = stmt.args[0]
    pieces = split_statements(text)
    if not pieces:
        raise usage(stmt, "the condition is empty")
    for _off, piece in pieces[:-1]:
        names = _BIND.findall(piece)
        if not piece.lstrip().lower().startswith("select") or not names:
            raise fail(stmt, f"in a condition, only the last part is the test; the parts before it are selects "
                             f"that bind placeholders (select … as :name), not {piece.strip()!r}", piece.strip(),
                       kind="parse")
        sql = _fill(session, stmt, _BIND.sub(lambda m: "as " + m.group(1), piece))
        table = session.sql.query(sql, session.tables, *at(stmt, piece.strip()))
        row = table.slice(0, 1).to_pylist()
        for name in names:
            value = row[0].get(name) if row else None
            if name not in block.saved:
                block.saved[name] = session.variables.get(name)
            session.variables[name] = "" if value is None else str(value).lower() if isinstance(value, bool) \
                else str(value)
    test = pieces[-1][1].strip()
    value = session.sql.scalar(f"select ({_fill(session, stmt, test)}) as c", session.tables, *at(stmt, test))
    if value is None:
        return False  # SQL's unknown is not true, as in a where clause
    if not isinstance(value, bool):
        raise fail(stmt, f"the condition {test!r} must be true or false; it is {value!r}", test, kind="sql")
    return value


def _fill(session: SessionHost, stmt: lang.Command, text: str) -> str:
    variables = session.variables_view()

    def value(name: str, _offset: int) -> str:
        if name not in variables:
            known = ", ".join(sorted(k for k in session.variables if not k.startswith("__"))) or "none"
            raise CellError("sql", f"unknown variable :{name} in the condition (variables set: {known})",
                            *at(stmt, ":" + name))
        return literal(str(variables[name]))

    return expand(text, value)


def _flow_command(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    flow = getattr(session, "flow", None)
    if not isinstance(flow, Flow):
        raise CellError("kernel", f"!{stmt.name} needs the session's flow, which it does not have",
                        stmt.line, stmt.column)
    run_flow(session, stmt, run, flow)


for _name, _doc, _example in (
        ("if", "run the statements up to !elif/!else/!fi when the condition (Spark SQL, `:var` = a variable) "
               "is true", "!if ''' :n > 0 ''';"),
        ("then", "optional, after !if", "!then;"),
        ("elif", "else, when this condition is true", "!elif ''' :n == 0 ''';"),
        ("else", "when no condition above was true", "!else;"),
        ("fi", "ends the !if", "!fi;")):
    command(_name, doc=_doc, example=_example)(_flow_command)
