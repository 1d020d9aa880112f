"""`include notebook.`name[#cell]``: run another notebook's cells in this session."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from console import lang
from console.lang import ParseError
from console.kernel.errors import CellError

if TYPE_CHECKING:
    from console.kernel.session import Session


def run_include(session: "Session", stmt: lang.Include, run: Any) -> None:
    """Run the named notebook's cells (or the one 1-based cell after '#'); markdown cells are skipped.

    An error inside names the included cell and its line, and is reported at the include statement.
    """
    if stmt.format.lower() != "notebook":
        raise CellError("parse", f"include supports notebook.`name[#cell]`, not {stmt.format}", stmt.line, stmt.column)
    name, _, index = stmt.path.partition("#")
    name = name.strip()
    if session.notebook_loader is None:
        raise CellError("data", "include needs a notebook store, and this session has none", stmt.line, stmt.column)
    if name in session._including:
        chain = " -> ".join(session._including + [name])
        raise CellError("data", f"include cycle: {chain}", stmt.line, stmt.column)
    try:
        cells = session.notebook_loader(name)
    except (LookupError, OSError, ValueError) as exc:
        raise CellError("data", f"cannot include notebook '{name}': {exc}", stmt.line, stmt.column) from None
    numbered = list(enumerate(cells, start=1))
    if index:
        if not index.strip().isdigit() or not 1 <= int(index) <= len(cells):
            raise CellError("data", f"notebook '{name}' has no cell {index.strip()!r} (it has {len(cells)} cells)",
                            stmt.line, stmt.column)
        numbered = [numbered[int(index) - 1]]
        if numbered[0][1][0] == "markdown":
            raise CellError("data", f"cell {index.strip()} of notebook '{name}' is a markdown cell", stmt.line, stmt.column)
    session._including.append(name)
    try:
        for n, (kind, source) in numbered:
            if kind == "markdown":
                continue
            where = f"{name}#{n}"
            try:
                session._execute(lang.parse_cell(source, where, kind), where, source, run)
            except (ParseError, CellError) as exc:
                kind_ = "parse" if isinstance(exc, ParseError) else exc.kind
                raise CellError(kind_, f"in {where}, line {exc.line}, column {exc.column}: {exc.message}",
                                stmt.line, stmt.column) from None
    finally:
        session._including.pop()
