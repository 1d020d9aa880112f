"""The MLSQL language: tokenizer, parser, AST and annotated Python cells (stdlib only).

    parse(text, cell=None) -> list[Statement]       a cell of MLSQL statements
    parse_cell(text, cell=None, kind=None)          any cell: annotated Python cells compile to
                                                    the statements MLSQL rewrites them into

Runs in: the kernel (and the CLI's headless runner).
"""
from __future__ import annotations

from console.lang.annotations import CACHE_DIR_VAR, compile_python_cell, header_kind, read_header
from console.lang.ast import (
    RUN_VERBS, SAVE_MODES, SET_TYPES, Command, Connect, Include, Load, PythonSetting, Register, Run, Save, Select, Set,
    Statement,
)
from console.lang.errors import ParseError
from console.lang.parser import parse
from console.lang.template import substitute, substitute_statement
from console.lang.tokens import T, Token, tokenize

__all__ = [
    "CACHE_DIR_VAR", "Command", "Connect", "Include", "Load", "ParseError", "PythonSetting", "RUN_VERBS", "Register",
    "Run", "SAVE_MODES", "SET_TYPES", "Save", "Select", "Set", "Statement", "T", "Token", "compile_python_cell",
    "header_kind", "parse", "parse_cell", "read_header", "substitute", "substitute_statement", "tokenize",
]

_SQL_KINDS = {"mlsql", "sql", "byzer"}


def parse_cell(text: str, cell: str | int | None = None, kind: str | None = None) -> list[Statement]:
    """Parse a notebook cell. kind="python" (or a `--%python` header) = an annotated Python cell;
    kind="markdown" (or `--%markdown`) = nothing to run."""
    declared = header_kind(text)
    effective = (declared or kind or "mlsql").lower()
    if kind and kind.lower() == "python" and declared is None:
        effective = "python"
    if effective == "python":
        return compile_python_cell(text, cell)
    if effective == "markdown":
        return []
    if effective not in _SQL_KINDS:
        line = next((n for n, ln in enumerate(text.split("\n"), 1) if ln[:3] == "--%" or ln[:2] == "#%"), 1)
        raise ParseError(f"unsupported cell type {declared!r}; expected python or markdown", cell, line, 1,
                         "--%python or --%markdown", text.split("\n")[line - 1] + "\n^")
    return parse(text, cell)
