"""The one error type of the language layer: what went wrong, where in the cell, what was expected."""
from __future__ import annotations

from console.errors import UserError


def snippet_at(text: str, line: int, column: int) -> str:
    """The source line at `line` with a caret under `column` (both 1-based)."""
    lines = text.splitlines() or [""]
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    # Tabs keep their width in the caret line so the caret stays under the right character.
    pad = "".join("\t" if ch == "\t" else " " for ch in src[: max(column - 1, 0)])
    return f"{src}\n{pad}^"


class ParseError(UserError):
    """A statement that cannot be parsed (or a ${var} that cannot be substituted).

    line/column are 1-based and relative to the cell; `expected` says what would have been valid
    there (None when it is not a matter of a missing token); `snippet` is the line plus a caret.
    """

    kind = "parse"
    line: int
    column: int

    def __init__(self, message: str, cell: str | int | None = None, line: int = 1, column: int = 1,
                 expected: str | None = None, snippet: str = "") -> None:
        super().__init__(message, line, column, traceback=snippet)  # the snippet is what the user sees under it
        self.cell = cell
        self.expected = expected
        self.snippet = snippet

    def __str__(self) -> str:
        where = f"line {self.line}, column {self.column}"
        if self.cell is not None:
            where = f"cell {self.cell}, {where}"
        text = f"{where}: {self.message}"
        return f"{text}\n{self.snippet}" if self.snippet else text

    def __reduce__(self):  # keep it picklable across the kernel pipe
        return (ParseError, (self.message, self.cell, self.line, self.column, self.expected, self.snippet))
