"""`!fs` / `!hdfs`: look at and arrange files, confined exactly like load and save.

Paths resolve as load/save resolve them (console/sources/paths.py): relative ones in the lake,
symlinks and `..` followed before the check, the server's private folder refused, and with
CONSOLE_DATA_ROOTS set everything outside the roots, the lake and the session's cache refused.
What a command changes (-rm, -mv, -cp's target, -mkdir) must also not be a root itself.
"""
from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa

from console import lang
from console.kernel.commands.base import command, emit_text, fail, rows_table, usage
from console.kernel.host import CellRun, SessionHost
from console.sources import SourceError

_HELP = (("-ls [-R] <path>", "list a folder (or one file); -R lists the folders below too"),
         ("-cat <path>", "print a text file"),
         ("-mkdir [-p] <path>", "make a folder (and its parents)"),
         ("-rm [-r] <path>", "remove a file; -r (or -rmr) a folder and what is in it"),
         ("-mv <from> <to>", "move or rename"),
         ("-cp [-r] <from> <to>", "copy a file (-r: a folder)"),
         ("-help", "this list"))
_CAT_LIMIT = 10 * 1024 * 1024  # -cat prints into the cell's output: a bigger file belongs in a load


@command("fs", "hdfs", doc="files under the lake and data roots: -ls, -cat, -mkdir, -rm [-r], -mv, -cp (see -help)",
         example="!fs -ls models;")
def fs(session: SessionHost, stmt: lang.Command, run: CellRun) -> None:
    if not stmt.args:
        raise usage(stmt, "needs an operation: " + ", ".join(h[0].split()[0] for h in _HELP))
    op, rest = stmt.args[0].lower(), list(stmt.args[1:])
    flags = {a.lower() for a in rest if a.startswith("-") and len(a) > 1}
    paths = [a for a in rest if not (a.startswith("-") and len(a) > 1)]
    try:
        if op in ("-help", "-usage"):
            run.show("fs_help", rows_table(["operation", "does"], list(_HELP)))
        elif op == "-ls":
            _need(stmt, paths, 1, "-ls <path>")
            run.show("files", _ls(session, stmt, paths[0], "-r" in flags))
        elif op == "-cat":
            _need(stmt, paths, 1, "-cat <path>")
            _cat(session, stmt, paths[0], run)
        elif op == "-mkdir":
            _need(stmt, paths, 1, "-mkdir [-p] <path>")
            _target(session, paths[0]).mkdir(parents=True, exist_ok="-p" in flags)
            emit_text(session, f"made {paths[0]}", "system")
        elif op in ("-rm", "-rmr"):
            _need(stmt, paths, 1, "-rm [-r] <path>")
            _rm(session, stmt, paths[0], op == "-rmr" or bool(flags & {"-r", "-rf", "-fr", "-skiptrash"}))
        elif op in ("-mv", "-cp"):
            _need(stmt, paths, 2, f"{op} <from> <to>")
            _move_or_copy(session, stmt, op, paths[0], paths[1], "-r" in flags)
        else:
            raise usage(stmt, f"unknown operation {stmt.args[0]!r}; use " + ", ".join(h[0] for h in _HELP))
    except SourceError as exc:
        raise fail(stmt, f"!{stmt.name} {stmt.args[0]}: {exc.message}", next(iter(paths), None)) from None
    except FileExistsError as exc:
        raise fail(stmt, f"!{stmt.name} {stmt.args[0]}: {exc.filename} already exists") from None
    except FileNotFoundError as exc:
        raise fail(stmt, f"!{stmt.name} {stmt.args[0]}: no such file or folder: {exc.filename}") from None
    except OSError as exc:
        raise fail(stmt, f"!{stmt.name} {stmt.args[0]}: {exc.strerror or exc}: {exc.filename}") from None


def _need(stmt: lang.Command, paths: list[str], n: int, form: str) -> None:
    if len(paths) != n:
        raise usage(stmt, f"use !{stmt.name} {form};")


def _source(session: SessionHost, path: str) -> Path:
    from console.sources.paths import resolve

    return resolve(session.source_context(), path)


def _target(session: SessionHost, path: str) -> Path:
    from console.sources.paths import resolve_target

    return resolve_target(session.source_context(), path)


def _ls(session: SessionHost, stmt: lang.Command, path: str, recursive: bool) -> pa.Table:
    from console.sources.paths import check_roots, shown

    root = _source(session, path)
    if not root.exists():
        raise FileNotFoundError(2, "no such file or folder", path)
    ctx = session.source_context()
    if root.is_file():
        found = [root]
    elif recursive:
        found = []
        for dirpath, dirnames, filenames in os.walk(root):  # links to folders are listed, not entered
            found += [Path(dirpath) / n for n in sorted(dirnames) + sorted(filenames)]
    else:
        found = sorted(root.iterdir())
    rows: list[tuple[Any, ...]] = []
    for p in found:
        try:
            # A link inside the folder may lead where the caller may not look: list it, never describe its target.
            check_roots(ctx, Path(os.path.realpath(p)), str(p))
            st = p.stat()
        except (SourceError, OSError):
            rows.append((shown(ctx, p), "link" if p.is_symlink() else "unknown", None, None))
            continue
        kind = "dir" if p.is_dir() else "file"
        stamp = dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc).replace(microsecond=0)
        rows.append((shown(ctx, p), kind, st.st_size if kind == "file" else None, stamp))  # lake:…
    return rows_table(["path", "type", "size", "modified"], rows,
                      {"size": pa.int64(), "modified": pa.timestamp("s", tz="UTC")})


def _cat(session: SessionHost, stmt: lang.Command, path: str, run: CellRun) -> None:
    file = _source(session, path)
    if file.is_dir():
        raise fail(stmt, f"!{stmt.name} -cat: {path} is a folder; use -ls", path)
    if file.stat().st_size > _CAT_LIMIT:
        raise fail(stmt, f"!{stmt.name} -cat: {path} is larger than {_CAT_LIMIT >> 20} MiB; load it instead "
                         f"(load text.`{path}` as t)", path)
    text = file.read_bytes().decode("utf-8", "replace")
    emit_text(session, text)
    lines = text.splitlines()
    run.show("content", pa.table({"value": pa.array(lines, pa.string())}))


def _rm(session: SessionHost, stmt: lang.Command, path: str, recursive: bool) -> None:
    target = _target(session, path)
    if not target.exists() and not target.is_symlink():
        raise FileNotFoundError(2, "no such file or folder", path)
    if target.is_dir() and not target.is_symlink():
        if not recursive:
            raise fail(stmt, f"!{stmt.name} -rm: {path} is a folder; use -rm -r to remove it and what is in it", path)
        shutil.rmtree(target)
    else:
        target.unlink()
    emit_text(session, f"removed {path}", "system")


def _move_or_copy(session: SessionHost, stmt: lang.Command, op: str, src: str, dst: str, recursive: bool) -> None:
    source = _target(session, src) if op == "-mv" else _source(session, src)
    if not source.exists():
        raise FileNotFoundError(2, "no such file or folder", src)
    target = _target(session, dst)
    if target.is_dir():  # into the folder, as mv and cp do
        target = target / source.name
        from console.sources.paths import check_roots

        check_roots(session.source_context(), target, dst)
    if op == "-mv":
        if target.exists():
            raise FileExistsError(17, "exists", dst)
        shutil.move(str(source), str(target))
    elif source.is_dir():
        if not recursive:
            raise fail(stmt, f"!{stmt.name} -cp: {src} is a folder; use -cp -r", src)
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copyfile(source, target)
    emit_text(session, f"{'moved' if op == '-mv' else 'copied'} {src} to {dst}", "system")
