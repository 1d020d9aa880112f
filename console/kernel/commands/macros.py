"""User macros (`set name='''…''';` then `!name a b;`) and the Byzer commands that do not exist here.

As in Byzer, `{0}`, `{1}` … in the macro's text are its positional arguments, and the named
form `!name _ -path x -table t` fills `${path}` and `${table}`. The text runs in the session like
a cell's statements; an error inside is reported at the call, naming the line inside the macro.
"""
from __future__ import annotations

import re
import threading

from console import lang
from console.lang import paramsafe
from console.kernel.commands.base import fail, named_args
from console.kernel.commands.shell import run_text
from console.kernel.host import CellRun, SessionHost

_POSITION = re.compile(r"\{(\d+)\}")
_MAX_DEPTH = 16
_depth = threading.local()  # macros calling macros: the cell's thread only

# Byzer commands that need something MLSQL Console does not have: (names, why).
UNAVAILABLE = {
    "plugin": "plugins are not available in MLSQL Console",
    "byzerllm": "plugins are not available in MLSQL Console (!byzerllm is a Byzer plugin)",
    "kill": "a session runs one cell at a time; stop it with the notebook's interrupt button",
    "kafkatool": "Kafka tools are not available in MLSQL Console",
    "callback": "stream callbacks are not available in MLSQL Console (there are no streaming jobs)",
    "profiler": "Spark's profiler is not available; MLSQL Console runs SQL on DuckDB",
    "savefile": "!saveFile is not available; save the table with `save … as binaryFile` or `!fs`",
}


def find_macro(session: SessionHost, name: str) -> str | None:
    """The text of the user macro `name` (a variable the user set), if there is one."""
    value = session.variables.get(name)
    return value if isinstance(value, str) else None


def run_macro(session: SessionHost, stmt: lang.Command, run: CellRun, text: str) -> None:
    # A macro's text runs as statements: one built from a run's parameter value (a set text
    # substitutes ${day} right away) would run that value as code, past lang/paramsafe.py's checks.
    if paramsafe.carries(getattr(session, "outside", {}), session.variables, [stmt.name]):
        raise fail(stmt, f"macro !{stmt.name}: its text was built from a parameter's value from outside the "
                         f"notebook, and a macro is code; write ${{name}} in the statements it runs, or pass "
                         f"the value as an argument (!{stmt.name} ${{name}};)", kind="parse")
    args = list(stmt.args)
    if args and args[0] == "_":
        values = named_args(stmt, args[1:])
        text = lang.substitute(text, values, strict=False)
    else:
        def positional(m: re.Match[str]) -> str:
            index = int(m.group(1))
            if index >= len(args):
                raise fail(stmt, f"macro !{stmt.name} uses {{{index}}} but was given {len(args)} argument(s)",
                           kind="parse")
            return args[index]

        text = _POSITION.sub(positional, text)
    depth = getattr(_depth, "value", 0)
    if depth >= _MAX_DEPTH:
        raise fail(stmt, f"macro !{stmt.name}: macros nested more than {_MAX_DEPTH} deep (does it call itself?)",
                   kind="parse")
    _depth.value = depth + 1
    try:
        run_text(session, stmt, text, run, f"macro !{stmt.name}")
    finally:
        _depth.value = depth
