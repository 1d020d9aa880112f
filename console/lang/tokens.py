"""The MLSQL tokenizer: words, strings, block strings, backquoted paths, ${var}s and symbols, with positions."""
from __future__ import annotations

import enum
from dataclasses import dataclass

from console.lang.errors import ParseError, snippet_at


class T(enum.Enum):
    WORD = "word"              # identifiers, keywords and numbers: [A-Za-z0-9_]+ (unicode letters too)
    STRING = "string"          # '…' or "…", backslash escapes
    BLOCK = "block string"     # '''…''', taken verbatim
    BACKQUOTED = "backquoted"  # `…`
    VARIABLE = "variable"      # ${name}
    SYMBOL = "symbol"          # any other single character
    SEMI = "';'"
    EOF = "end of cell"


@dataclass(frozen=True, slots=True)
class Token:
    type: T
    text: str    # exactly as written, quotes included
    value: str   # decoded: quotes removed, escapes applied; keywords keep their spelling
    line: int    # 1-based
    column: int  # 1-based
    offset: int  # index of the first character in the cell text
    end: int     # index one past the last character

    def is_word(self, *words: str) -> bool:
        return self.type is T.WORD and self.value.lower() in words


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            # Unknown escapes stay as written, so regexes like "\d" in options survive.
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def tokenize(text: str, cell: str | int | None = None) -> list[Token]:
    """Split a cell into tokens (comments dropped); the list always ends with an EOF token."""
    tokens: list[Token] = []
    n = len(text)
    i = 0
    line = 1
    line_start = 0  # offset of the current line's first character

    def fail(message: str, at: int, expected: str | None) -> ParseError:
        ln = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        return ParseError(message, cell, ln, col, expected, snippet_at(text, ln, col))

    def advance_lines(start: int, stop: int) -> None:
        nonlocal line, line_start
        k = text.count("\n", start, stop)
        if k:
            line += k
            line_start = text.rfind("\n", start, stop) + 1

    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
            line_start = i
            continue
        if ch in " \t\r\f\v":
            i += 1
            continue
        col = i - line_start + 1
        if ch == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise fail("unterminated comment /*", i, "*/")
            advance_lines(i, j + 2)
            i = j + 2
            continue
        start, start_line = i, line
        if ch == "'" and text.startswith("'''", i):
            j = text.find("'''", i + 3)
            if j < 0:
                raise fail("unterminated block string '''", i, "''' to close the block string")
            advance_lines(i, j + 3)
            i = j + 3
            tokens.append(Token(T.BLOCK, text[start:i], text[start + 3:j], start_line, col, start, i))
            continue
        if ch in "'\"":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise fail("unterminated string", i, f"{ch} to close the string")
            advance_lines(i, j + 1)
            i = j + 1
            tokens.append(Token(T.STRING, text[start:i], _unescape(text[start + 1:j]), start_line, col, start, i))
            continue
        if ch == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise fail("unterminated backquoted name", i, "` to close the name")
            advance_lines(i, j + 1)
            i = j + 1
            tokens.append(Token(T.BACKQUOTED, text[start:i], text[start + 1:j], start_line, col, start, i))
            continue
        if ch == "$" and text.startswith("${", i):
            j = text.find("}", i + 2)
            if j > 0 and "\n" not in text[i:j]:
                i = j + 1
                tokens.append(Token(T.VARIABLE, text[start:i], text[start + 2:j].strip(), line, col, start, i))
                continue
        if ch.isalnum() or ch == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            i = j
            tokens.append(Token(T.WORD, text[start:i], text[start:i], line, col, start, i))
            continue
        i += 1
        kind = T.SEMI if ch == ";" else T.SYMBOL
        tokens.append(Token(kind, ch, ch, line, col, start, i))
    col = n - line_start + 1
    tokens.append(Token(T.EOF, "", "", line, col, n, n))
    return tokens
