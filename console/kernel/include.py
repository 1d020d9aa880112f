"""`include notebook.`name[#cell]``: which cells of another notebook a session runs, and where an error inside is told.

The session runs them (it owns the catalog); this module only chooses them and words their errors.
"""
from __future__ import annotations

from dataclasses import dataclass

from console import lang
from console.kernel.errors import CellError
from console.lang import ParseError
from console.protocols import NotebookLoader


@dataclass(frozen=True)
class IncludedCell:
    where: str  # "name#n": the cell as errors inside it name it
    kind: str
    source: str


def included_cells(stmt: lang.Include, loader: NotebookLoader | None,
                   including: list[str]) -> tuple[str, list[IncludedCell]]:
    """The included notebook's name and its cells to run (or the one 1-based cell after '#').

    Markdown cells are skipped; `including` is the chain of notebooks being included, to refuse a cycle.
    """
    if stmt.format.lower() != "notebook":
        raise CellError("parse", f"include supports notebook.`name[#cell]`, not {stmt.format}", stmt.line, stmt.column)
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
