"""Byzer's `:name` placeholders in `!if` conditions and `!assert` expressions, and splitting on `;`.

In a condition `:a` is the value of the variable a (set earlier with `set`); in an !assert
expression `:v` is the column v of the asserted table. Text inside quotes is never touched, so
`'10:30'` stays a string and DuckDB's `x::int` cast stays a cast.
"""
from __future__ import annotations

import re
from typing import Callable

_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
_START = re.compile(r"[A-Za-z_]")
_WORD = re.compile(r"[A-Za-z0-9_]")


def expand(text: str, replace: Callable[[str, int], str]) -> str:
    """text with every `:name` outside quotes replaced by replace(name, offset of the ':')."""
    out: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        ch = text[i]
        if quote is not None:
            out.append(ch)
            if ch == "\\" and quote != "`" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = None
            i += 1
            continue
        if ch in "'\"`":
            quote = ch
        elif (ch == ":" and i + 1 < n and _START.match(text[i + 1])
              and (i == 0 or not (_WORD.match(text[i - 1]) or text[i - 1] == ":"))):
            j = i + 1
            while j < n and _WORD.match(text[j]):
                j += 1
            out.append(replace(text[i + 1:j], i))
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def literal(value: str) -> str:
    """A variable's value as a Spark SQL literal: numbers as numbers (Byzer converts `:num` so), else a string."""
    if _NUMBER.fullmatch(value.strip()):
        return value.strip()
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def split_statements(text: str) -> list[tuple[int, str]]:
    """(offset, piece) for each `;`-separated piece outside quotes, blank pieces dropped."""
    pieces: list[tuple[int, str]] = []
    start = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == "\\" and quote != "`":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif ch == ";":
            pieces.append((start, text[start:i]))
            start = i + 1
        i += 1
    pieces.append((start, text[start:]))
    return [(off, p) for off, p in pieces if p.strip()]
