"""`!sh` (a command line in the lake, inside the kernel's sandbox), `!pyInclude` and `!runScript`."""
from __future__ import annotations

import subprocess

import pyarrow as pa

from console import lang
from console.kernel.commands.base import command, emit_text, fail, usage
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost
from console.lang import ParseError


@command("sh", doc="run a program (several arguments) or a shell line (one quoted argument) in the lake; "
                   "its output is printed and is the result table (`value`, one row per line)",
         example="!sh ls -l models;")
def sh(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    if not stmt.args:
        raise usage(stmt, "use !sh <program> <args…>; or !sh \"<shell line>\";")
    lake = session.source_context().lake
    try:
        lake.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(stmt, f"cannot make the lake folder {lake}: {exc.strerror}") from None
    # Like `set … where type="shell"`: the working folder is the lake, never the server's folder;
    # the kernel runs sandboxed, so what the program may read is what the kernel may read.
    argv = ["bash", "-c", stmt.args[0]] if len(stmt.args) == 1 else list(stmt.args)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=lake)
    except OSError as exc:
        raise fail(stmt, f"cannot run {argv[0]}: {exc.strerror}", stmt.args[0]) from None
    if done.stdout:
        emit_text(session, done.stdout)
    if done.returncode != 0:
        raise fail(stmt, f"!sh failed with exit code {done.returncode}: "
                         f"{done.stderr.strip() or done.stdout.strip()}")
    if done.stderr:
        emit_text(session, done.stderr, "stderr")
    run.show("sh", pa.table({"value": pa.array(done.stdout.splitlines(), pa.string())}))


@command("pyInclude", doc="read a Python file into a one-row table (`content`, `path`), for code='''py.<table>'''",
         example="!pyInclude project 'src/algs/train.py' named train_code;")
def py_include(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    from console.kernel import include

    args = list(stmt.args)
    if len(args) != 4 or args[0].lower() not in ("local", "project") or args[2].lower() != "named":
        raise usage(stmt, "use !pyInclude project '<path.py>' named <table>; or "
                          "!pyInclude local '<alias or github.com/org/repo>.<dotted.path>.py' named <table>;")
    kind, ref, name = args[0].lower(), args[1], args[3]
    if kind == "local":
        file = include.local_file(session, ref, (".py",), stmt)
    else:
        from console.sources import SourceError
        from console.sources.paths import resolve

        try:
            file = resolve(session.source_context(), ref)
        except SourceError as exc:
            raise fail(stmt, exc.message, ref) from None
    if not file.is_file():
        raise fail(stmt, f"!pyInclude: no file {ref} ({file})", ref)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(stmt, f"!pyInclude: cannot read {ref}: {exc}", ref) from None
    session.put(name, pa.table({"content": [text], "path": [str(file)]}), run)


@command("runScript", doc="run MLSQL text given as a string; `named t` names its last table",
         example="!runScript ''' select 1 as a as b; ''' named output;")
def run_script(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    args = list(stmt.args)
    if len(args) not in (1, 3) or (len(args) == 3 and args[1].lower() != "named"):
        raise usage(stmt, "use !runScript '''<statements>''' [named <table>];")
    run_text(session, stmt, args[0], run, "!runScript")
    if len(args) == 3:
        if run.last is None:
            raise fail(stmt, "!runScript: the script made no table to name")
        session.put(args[2], run.last[1], run)


def run_text(session: SessionHost, stmt: lang.Command, text: str, run: CellRun, what: str) -> None:
    """Run MLSQL text for a command; an error inside is reported at the command, naming the line inside."""
    try:
        session.run_statements(text, run)
    except (ParseError, CellError) as exc:
        kind = "parse" if isinstance(exc, ParseError) else exc.kind
        raise CellError(kind, f"in {what}, line {exc.line}, column {exc.column}: {exc.message}",
                        stmt.line, stmt.column) from None
