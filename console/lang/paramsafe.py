"""Parameters are values, not code: what a run's value may be where its `${name}` lands.

A parameter's value comes from outside the notebook: a job's parameters, a runner's "run now",
the parameter form, `--param`. Substituted as text, it could end the literal it sits in (`x'; …`
inside `select '${day}'`) and run as the job's owner. So wherever a parameter (or a variable set
from one) is substituted, `fill` looks at what the text around `${name}` is, and either escapes
the value for it or refuses it, with a message naming the parameter. The policy, one line a place:

- SQL, inside '…' or "…": anything, escaped as a Spark SQL string (\\ and the quote).
- SQL, inside r'…' or X'…' (no escapes there): anything but that quote.
- SQL, inside `…` (a quoted name): anything but control characters; ` is doubled.
- SQL, outside quotes: a number if the default is one, a name (a.b_c) if the default is one,
  else either; the default itself always.
- SQL, inside a comment: no newline, */ or /*.
- SQL for another database (the `sql` and `query` options, e.g. jdbc's): as SQL outside quotes;
  inside quotes no quote, backslash or newline (its escapes are not known here).
- A shell line (type="shell"), Python code (code='''…''', UDFs): plain text (letters, digits,
  spaces and _ . , : / @ % + = -, no word starting with -); the default itself always.
- A command's arguments (!name …, !sh "…", a macro's {0}): the same in one word (no spaces: a
  macro may put it in SQL outside quotes); the default itself always.
- Anything else (paths, option values, table names, set text): as is; each is one value already,
  checked where it is used (a path against the lake and the data roots).

A `set x = "…${day}…"` makes x carry the same rules while day's value is not its default.
Runs in: the kernel (console/lang/template.py, at each substitution) and the server, which checks
a run's values against the notebook's cells first to answer a 400 (console/lang/params.py).
"""
from __future__ import annotations

import re
from collections.abc import Mapping

NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[LlDd]?")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
PLAIN = re.compile(r"[\w .,:/@%+=-]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WORD = re.compile(r"\w")

SQL, FOREIGN_SQL, PLAIN_TEXT, WORD, VALUE = "sql", "foreign_sql", "plain", "word", "value"


class Refused(ValueError):
    """A parameter's value that cannot stand where its ${name} is; the message says why and what can."""

    def __init__(self, name: str, value: str, why: str, derived: bool = False) -> None:
        self.name, self.value, self.why = name, value, why
        shown = value if len(value) <= 60 else value[:57] + "..."
        what = f"variable {name} (set from a parameter's value)" if derived else f"parameter {name}"
        super().__init__(f"{what}: the value {shown!r} {why}")


def sql_context(text: str, pos: int) -> str:
    """What SQL `text` is at `pos`, read as Spark's lexer does: "'" or '"' (a string), "r'"/'r"'
    (a string without escapes), "`" (a quoted name), "comment", or "bare"."""
    i, n = 0, min(pos, len(text))
    while i < n:
        c = text[i]
        if c in "'\"":
            raw = i > 0 and _WORD.match(text[i - 1]) is not None
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 1 if raw or text[j] != "\\" else 2
            if j >= n:
                return ("r" + c) if raw else c
            i = j + 1
        elif c == "`":
            j = i + 1
            while j < len(text) and (text[j] != "`" or text[j + 1:j + 2] == "`"):
                j += 2 if text[j] == "`" else 1
            if j >= n:
                return "`"
            i = j + 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            if j < 0 or j >= n:
                return "comment"
            i = j + 1
        elif text.startswith("/*", i):
            depth, j = 1, i + 2  # Spark's comments nest
            while j < len(text) and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth or j > n:
                return "comment"
            i = j
        else:
            i += 1
    return "bare"


def _kind(default: str | None) -> str:
    if default is not None and NUMBER.fullmatch(default):
        return "number"
    if default is not None and NAME.fullmatch(default):
        return "name"
    return "number or a name"


def _bare(name: str, value: str, default: str | None, before: str) -> str:
    kind = _kind(default)
    ok = (NUMBER.fullmatch(value) and "number" in kind) or (NAME.fullmatch(value) and "name" in kind)
    if ok and before == "-" and value.startswith("-"):  # 1 -${n} with n=-5 would start a -- comment
        raise Refused(name, value, "cannot follow a '-' in SQL: it would start a -- comment; "
                                   "write a space before the ${…}")
    if not ok:
        since = f" (as its default {default!r} is)" if kind in ("number", "name") else ""
        raise Refused(name, value, f"cannot stand outside quotes in SQL: only a {kind}{since} can; "
                                   f"quote the ${{{name}}} in the SQL ('${{{name}}}') to take any text")
    return value


def _plain(name: str, value: str, where: str, spaces: bool) -> str:
    # A macro puts its arguments anywhere in its text, SQL outside quotes too: one word there.
    if not PLAIN.fullmatch(value) or any(w.startswith("-") for w in value.split(" ")) or (" " in value and not spaces):
        what = "spaces and " if spaces else ""
        raise Refused(name, value, f"cannot stand in {where}: only plain text can (letters, digits, {what}"
                                   f"_ . , : / @ % + = -{'' if spaces else ' in one word'}, no word starting with -)")
    return value


def fill(name: str, value: str, default: str | None, where: str, text: str, pos: int,
         field: str = "this place") -> str:
    """The text that stands for parameter `name` at `pos` of `text` (where: SQL, FOREIGN_SQL,
    PLAIN_TEXT, WORD or VALUE); Refused when the value cannot stand there. `default`: the declared
    default (None for a variable set from a parameter), which is the notebook's own code."""
    try:
        return _fill(name, value, default, where, text, pos, field)
    except Refused as exc:
        if default is None:  # said of the variable, set from a parameter: the message says so
            raise Refused(name, value, exc.why, derived=True) from None
        raise


def _fill(name: str, value: str, default: str | None, where: str, text: str, pos: int, field: str) -> str:
    if where == VALUE:
        return value
    own = default is not None and value == default
    if where in (PLAIN_TEXT, WORD):
        return value if own else _plain(name, value, field, spaces=where == PLAIN_TEXT)
    ctx = sql_context(text, pos)
    if ctx == "bare":
        return value if own else _bare(name, value, default, text[pos - 1:pos])
    if ctx == "comment":
        if "\n" in value or "*/" in value or "/*" in value:
            raise Refused(name, value, "cannot stand in an SQL comment: no newline, */ or /* there")
        return value
    if ctx == "`":
        if _CONTROL.search(value):
            raise Refused(name, value, "cannot stand in a quoted SQL name: no control characters there")
        return value.replace("`", "``")
    quote = ctx[-1]
    if where == FOREIGN_SQL or len(ctx) == 2:  # another database's escapes, or a raw literal without any
        bad = (quote, "\\", "\n", "\r") if where == FOREIGN_SQL else (quote,)
        if any(b in value for b in bad):
            shown = " or ".join(repr(b) for b in bad)
            raise Refused(name, value, f"cannot stand inside this quoted literal: it may not hold {shown} "
                                       f"(it cannot be escaped there)")
        return value
    escaped = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\x00", "\\0")


def carries(outside: Mapping[str, str | None], variables: Mapping[str, str], names: list[str]) -> bool:
    """Does a value built from these ${names} hold a value from outside? A parameter at its declared
    default is the notebook's own code; at any other value, or a variable set from one, it is not."""
    return any(n in outside and (outside[n] is None or variables.get(n) != outside[n]) for n in names)
