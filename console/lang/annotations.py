"""Annotated Python cells: the `--%`/`#%` header, and the statements such a cell compiles to.

The compiled form follows MLSQL's notebook rewrite (PythonHint): optional `!python conf/env`
settings, `run command as Ray.`` where inputTable=… and outputTable="<out>_0" and code='''…'''`,
then either a cache round trip through parquet or `select * from <out>_0 as <out>`. Without
`--%output` the Ray statement carries autoOutput="<out>": if the code builds no result, the
engine skips the statements after it that mention <out>, and the cell shows its printed output only.
"""
from __future__ import annotations

import re
import shlex
import uuid
from dataclasses import dataclass, field

from console.lang import ast
from console.lang.errors import ParseError, snippet_at

# Keys with a meaning of their own; any other key=value header becomes a `!python conf` entry.
_KNOWN = {k.lower(): k
          for k in ("input", "output", "cache", "schema", "dataMode", "runIn", "env", "model", "confTable")}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
CACHE_DIR_VAR = "__cache_dir__"  # the engine sets it to <data_dir>/cache/<session id>
# `%pip install …` as in Jupyter and Databricks: a line of its own in a Python cell, run before the code
_PIP_LINE = re.compile(r"^[ \t]*%pip(?:[ \t]+(.*))?$")


@dataclass
class Header:
    kind: str | None = None                     # the last header without '=' ("python", "markdown", …)
    params: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)  # key -> cell line of its header
    body: str = ""                              # the cell with header lines blanked


_GLUED_MARKDOWN = re.compile(r"markdown(?![A-Za-z0-9_])", re.IGNORECASE)


def _is_header(line: str) -> bool:
    return line.startswith("--%") or line.startswith("#%")


def read_header(text: str) -> Header:
    """Split a cell into its header and its body (header lines replaced by blank lines)."""
    head = Header()
    body: list[str] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not _is_header(line):
            body.append(line)
            continue
        body.append("")
        content = line[3:] if line.startswith("--%") else line[2:]
        if _GLUED_MARKDOWN.match(content):
            # Byzer writes `--%markdown以上为…` / `--%markdown# Title`: the text right after the word
            # (any letter but an ASCII one, which would make another word) is the cell's markdown.
            head.kind = "markdown"
            continue
        key, eq, value = content.partition("=")
        if not eq:
            head.kind = content.strip()
            continue
        key = _KNOWN.get(key.strip().lower(), key.strip())
        head.params[key] = value.strip()
        head.lines[key] = n
    head.body = "\n".join(body)
    return head


def header_kind(text: str) -> str | None:
    """The cell type its header declares (None when it has no type header); cheap on big cells."""
    if "--%" not in text and "#%" not in text:
        return None
    return read_header(text).kind


def compile_python_cell(text: str, cell: str | int | None = None) -> list[ast.Statement]:
    """The statements an annotated Python cell stands for."""
    head = read_header(text)
    p = head.params

    def bad(key: str, message: str, expected: str) -> ParseError:
        line = head.lines.get(key, 1)
        return ParseError(message, cell, line, 1, expected, snippet_at(text, line, 1))

    def at(key: str) -> ast.Position:
        return {"line": head.lines.get(key, 1), "column": 1}

    for key in ("output", "input", "model", "confTable"):
        if key in p and not _NAME.match(p[key]):
            raise bad(key, f"--%{key} must be a table name, found {p[key]!r}", "a table name")
    cache = p.get("cache", "false").lower()
    if cache not in ("true", "false"):
        raise bad("cache", f"--%cache must be true or false, found {p['cache']!r}", "true or false")
    out = p.get("output") or uuid.uuid4().hex
    stmts: list[ast.Statement] = _pip_lines(head, text, cell)
    if stmts and not head.body.strip():
        return stmts  # a cell of %pip lines only starts no Python worker
    settings = [("conf", "schema", "schema"), ("env", "env", "PYTHON_ENV"),
                ("conf", "dataMode", "dataMode"), ("conf", "runIn", "runIn")]
    settings += [("conf", k, k) for k in p if k not in _KNOWN.values()]
    for scope, key, name in settings:
        if key in p:
            src = f'!python {scope} "{name}={p[key]}"'
            stmts.append(ast.PythonSetting(scope=scope, key=name, value=p[key], source=src, **at(key)))
    options = {"inputTable": p.get("input") or "command", "outputTable": f"{out}_0"}
    for key in ("confTable", "model"):
        if key in p:
            options[key] = p[key]
    if "output" not in p:
        # No table was asked for: a cell that never calls build_result shows what it printed only,
        # not MLSQL's empty `value` table under a random name. The option names that random
        # name, so the engine can skip the steps below (each mentions it) when nothing was built.
        options["autoOutput"] = out
    options["code"] = head.body
    run_src = "run command as Ray.`` where " + " and ".join(
        f'{k}="{v}"' for k, v in options.items() if k != "code") + " and code='''…'''"
    stmts.append(ast.Run(input="command", et="Ray", options=options, code_line=1, source=run_src))
    if cache == "true":
        path = "${%s}/%s" % (CACHE_DIR_VAR, out)
        stmts.append(ast.Save(mode="overwrite", table=f"{out}_0", format="parquet", path=path,
                              source=f"save overwrite {out}_0 as parquet.`{path}`", **at("cache")))
        stmts.append(ast.Load(format="parquet", path=path, table=out,
                              source=f"load parquet.`{path}` as {out}", **at("cache")))
    else:
        sql = f"select * from {out}_0"
        stmts.append(ast.Select(sql=sql, table=out, source=f"{sql} as {out}", **at("output")))
    return stmts


def _pip_lines(head: Header, text: str, cell: str | int | None) -> list[ast.Statement]:
    """The cell's `%pip …` lines as `!pip …` commands, blanked in the body (the code's line numbers stay)."""
    if "%pip" not in head.body:
        return []
    found: list[ast.Statement] = []
    lines = head.body.split("\n")
    for n, line in enumerate(lines, start=1):
        m = _PIP_LINE.match(line)
        if m is None:
            continue
        raw = (m.group(1) or "").strip()
        try:
            args = tuple(shlex.split(raw, comments=True))
        except ValueError as exc:
            raise ParseError(f"%pip: {exc}", cell, n, 1, "pip arguments", snippet_at(text, n, 1)) from None
        found.append(ast.Command(name="pip", args=args, raw=raw, source=line.strip(), line=n, column=1))
        lines[n - 1] = ""
    head.body = "\n".join(lines)
    return found
