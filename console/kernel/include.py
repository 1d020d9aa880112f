"""`include`: which cells a session runs for it, and where an error inside is told.

- `include notebook.`name[#cell]``: another notebook's cells (or one, 1-based).
- `include project.`src/a.mlsql``: a script file; relative paths are in the lake.
- `include lib.`github.com/org/repo` where alias="x"`: names a library folder. Kernels have no
  network, so nothing is downloaded: the library must already be in `<lake>/lib/github.com/org/repo`.
- `include local.`x.udf.hello`` (or `local.`github.com/org/repo.udf.hello``): the script
  udf/hello.mlsql (or .byzer, .sql) of that library.

Files are confined like load and save (console/sources/paths.py). The session runs the cells
(it owns the catalog); this module only chooses them and words their errors.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from console import lang
from console.kernel.errors import CellError
from console.lang import ParseError
from console.protocols import NotebookLoader

if TYPE_CHECKING:
    from console.kernel.host import SessionHost

LIB_FOLDER = "lib"                 # <lake>/lib/<github.com/org/repo>
LIB_ALIAS_PREFIX = "__lib__."      # a hidden session variable per alias: its value is the library's folder
SCRIPT_SUFFIXES = (".mlsql", ".byzer", ".sql")
FILE_FORMATS = ("project", "local", "lib")


@dataclass(frozen=True)
class IncludedCell:
    where: str  # "name#n": the cell as errors inside it name it
    kind: str
    source: str


def included_cells(stmt: lang.Include, loader: NotebookLoader | None,
                   including: list[str], host: SessionHost | None = None) -> tuple[str, list[IncludedCell]]:
    """The included notebook's (or file's) name and its cells to run (or the one 1-based cell after '#').

    Markdown cells are skipped; `including` is the chain of notebooks being included, to refuse a
    cycle. Files (project, local, lib) need `host`, the session whose paths and variables they use.
    """
    fmt = stmt.format.lower()
    if fmt in FILE_FORMATS:
        if host is None:
            raise CellError("kernel", f"include {stmt.format} needs the session's paths, which this kernel "
                                      "does not pass", stmt.line, stmt.column)
        return _file_cells(stmt, host, including)
    if fmt != "notebook":
        raise CellError("parse", f"include supports notebook.`name[#cell]`, project.`file`, lib.`repo` and "
                                 f"local.`alias.path`, not {stmt.format}", stmt.line, stmt.column)
    name, _, index = stmt.path.partition("#")
    name = name.strip()
    if loader is None:
        raise CellError("data", "include needs a notebook store, and this session has none", stmt.line, stmt.column)
    if name in including:
        chain = " -> ".join([*including, name])
        raise CellError("data", f"include cycle: {chain}", stmt.line, stmt.column)
    try:
        cells = loader(name)
    except (LookupError, OSError, ValueError) as exc:
        raise CellError("data", f"cannot include notebook '{name}': {exc}", stmt.line, stmt.column) from None
    numbered = list(enumerate(cells, start=1))
    if index:
        if not index.strip().isdigit() or not 1 <= int(index) <= len(cells):
            raise CellError("data", f"notebook '{name}' has no cell {index.strip()!r} (it has {len(cells)} cells)",
                            stmt.line, stmt.column)
        numbered = [numbered[int(index) - 1]]
        if numbered[0][1][0] == "markdown":
            raise CellError("data", f"cell {index.strip()} of notebook '{name}' is a markdown cell",
                            stmt.line, stmt.column)
    return name, [IncludedCell(f"{name}#{n}", kind, source) for n, (kind, source) in numbered if kind != "markdown"]


def at_include(stmt: lang.Include, cell: IncludedCell, exc: ParseError | CellError) -> CellError:
    """An error inside an included cell, reported at the include statement, naming the cell and its line."""
    kind = "parse" if isinstance(exc, ParseError) else exc.kind
    return CellError(kind, f"in {cell.where}, line {exc.line}, column {exc.column}: {exc.message}",
                     stmt.line, stmt.column)


def _file_cells(stmt: lang.Include, host: SessionHost, including: list[str]) -> tuple[str, list[IncludedCell]]:
    fmt = stmt.format.lower()
    if fmt == "lib":
        root = library(host, stmt.path.strip(), stmt)
        alias = stmt.options.get("alias")
        if alias:
            host.variables[LIB_ALIAS_PREFIX + alias] = str(root)
        return stmt.path.strip(), []
    file = local_file(host, stmt.path.strip(), SCRIPT_SUFFIXES, stmt) if fmt == "local" \
        else _confined(host, stmt.path, stmt)
    if not file.is_file():
        raise CellError("data", f"include {stmt.format}: {stmt.path} is not a file ({file})", stmt.line, stmt.column)
    name = str(file)
    if name in including:
        raise CellError("data", f"include cycle: {' -> '.join([*including, name])}", stmt.line, stmt.column)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CellError("data", f"cannot read {stmt.path}: {exc}", stmt.line, stmt.column) from None
    return name, [IncludedCell(stmt.path.strip(), "mlsql", text)]


def _confined(host: SessionHost, path: str, stmt: lang.Statement) -> Path:
    from console.sources import SourceError
    from console.sources.paths import resolve

    try:
        return resolve(host.source_context(), path)
    except SourceError as exc:
        raise CellError("data", exc.message, stmt.line, stmt.column) from None


def library(host: SessionHost, repo: str, stmt: lang.Statement) -> Path:
    """The folder of a library (`github.com/org/repo`), which must already be in the lake."""
    root = _confined(host, f"{LIB_FOLDER}/{repo.strip('/')}", stmt)
    if not root.is_dir():
        raise CellError("data", f"library {repo} is not in the lake: MLSQL Console does not download "
                                f"libraries (kernels have no network); copy it to {root}", stmt.line, stmt.column)
    return root


def local_file(host: SessionHost, ref: str, suffixes: tuple[str, ...], stmt: lang.Statement) -> Path:
    """The file `local.`alias.a.b`` (or `local.`github.com/org/repo.a.b``) names, trying each suffix.

    A reference ending in `.py` names a Python file (!pyInclude): the suffix is part of the name.
    """
    head, _, tail = ref.rpartition("/")
    first, *parts = tail.split(".")
    if parts and parts[-1] == "py":
        parts.pop()
        suffixes = (".py",)
    if head:
        root = library(host, f"{head}/{first}", stmt)
    else:
        folder = host.variables.get(LIB_ALIAS_PREFIX + first)
        if folder is None:
            aliases = sorted(k[len(LIB_ALIAS_PREFIX):] for k in host.variables if k.startswith(LIB_ALIAS_PREFIX))
            raise CellError("data", f"no library alias {first!r} (aliases: {', '.join(aliases) or 'none'}); "
                                    f"name one first with include lib.`github.com/org/repo` where alias=\"{first}\"",
                            stmt.line, stmt.column)
        root = Path(folder)
    if not parts:
        raise CellError("data", f"local.`{ref}` names a library, not a file in it (add .path.to.file)",
                        stmt.line, stmt.column)
    base = "/".join(parts)
    tried = []
    for suffix in suffixes:
        candidate = _confined(host, str(root / (base + suffix)), stmt)
        if candidate.is_file():
            return candidate
        tried.append(str(root / (base + suffix)))
    raise CellError("data", f"local.`{ref}`: no file {' or '.join(tried)}", stmt.line, stmt.column)
