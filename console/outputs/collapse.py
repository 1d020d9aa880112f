"""Collapse terminal redraws (`\\r`, `\\b`, ANSI escape codes) in a stream of output text.

A progress bar redraws one line hundreds of times; storing every redraw would bury the real
output. `LineCollapser` keeps, per source and stream, the line the viewer currently shows and
turns each piece of raw text into *wire text*, which obeys one rule:

    Wire text never contains `\\b`, ANSI codes or `\\r`, except that it may begin with one `\\r`,
    meaning "replace the unfinished last line of this source+stream with what follows".

So a run of redraws within one batch becomes the final state of the line, and a redraw that
spans batches still redraws in place in the browser (and in a replay, which concatenates the
same stored chunks).
"""
from __future__ import annotations

import re

# CSI (colours, cursor moves, erase-line), OSC (titles, hyperlinks), and two-byte escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# An escape sequence cut off at the end of a piece: held back until the rest arrives.
_ANSI_PARTIAL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*)?\Z")
# Anything that makes text more than an append: a redraw, a backspace, an escape code.
_REDRAW = re.compile(r"[\r\b\x1b]")


class LineCollapser:
    """Stateful collapse for ONE source+stream; `feed(raw) -> wire text`."""

    def __init__(self) -> None:
        # The unfinished last line as the viewer shows it, in the pieces it came in: joined only
        # when a redraw needs it (a 100 MB line fed 64 kB at a time was copied whole each time).
        self._pieces: list[str] = []
        self._carry = ""  # a trailing "\r" or partial escape code held for the next piece

    @property
    def pending(self) -> str:
        line = "".join(self._pieces)
        self._pieces = [line]
        return line

    @pending.setter
    def pending(self, line: str) -> None:
        self._pieces = [line]

    def feed(self, raw: str) -> str:
        text = self._carry + raw
        self._carry = ""
        if not _REDRAW.search(text):
            # Plain text (nearly all output) is its own wire text: no walk over each character,
            # which made a 50 MB log cost tens of seconds here.
            last = text.rfind("\n")
            if last < 0:
                self._pieces.append(text)
            else:
                self._pieces = [text[last + 1:]]
            return text
        partial = _ANSI_PARTIAL.search(text)
        if partial:
            self._carry, text = text[partial.start():], text[: partial.start()]
        text = _ANSI.sub("", text)
        if text.endswith("\r"):
            # Might be the first half of "\r\n"; decide when the next piece comes.
            self._carry = "\r" + self._carry
            text = text[:-1]
        return self._apply(text.replace("\r\n", "\n"))

    def _apply(self, text: str) -> str:
        viewer = len(self.pending)
        line = list(self.pending)
        keep = viewer  # leading chars of `line` the viewer already shows, unchanged
        out: list[str] = []
        for ch in text:
            if ch == "\n":
                out.append(self._line_text(line, keep, viewer) + "\n")
                line, keep, viewer = [], 0, 0
            elif ch == "\r":
                line, keep = [], 0
            elif ch == "\b":
                if line:
                    line.pop()
                    keep = min(keep, len(line))
            else:
                line.append(ch)
        out.append(self._line_text(line, keep, viewer))
        self.pending = "".join(line)
        return "".join(out)

    @staticmethod
    def _line_text(line: list[str], keep: int, viewer: int) -> str:
        """An append to what the viewer shows, or `\\r` + the whole line when part of it changed.

        viewer: length of the line the viewer shows (0 for every line after the first).
        """
        if keep < viewer:
            return "\r" + "".join(line)
        return "".join(line[viewer:])


class StreamCollapser:
    """One `LineCollapser` per (source, stream) of a run."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str, str], LineCollapser] = {}

    def feed(self, source: str, stream: str, raw: str) -> str:
        key = (source, stream)
        if key not in self._lines:
            self._lines[key] = LineCollapser()
        return self._lines[key].feed(raw)


def render(chunks: list[str]) -> str:
    """What a viewer shows after applying wire chunks of one source+stream in order (tests, logs)."""
    shown = ""
    for text in chunks:
        if text.startswith("\r"):
            shown = shown[: shown.rfind("\n") + 1] + text[1:]
        else:
            shown += text
    return shown


def terminal(raw: str) -> str:
    """What a notebook shows for raw text: the reference `render(collapse(...))` must match."""
    text = _ANSI.sub("", raw).replace("\r\n", "\n")
    lines: list[str] = []
    for part in text.split("\n"):
        cur: list[str] = []
        for ch in part:
            if ch == "\r":
                cur = []
            elif ch == "\b":
                if cur:
                    cur.pop()
            else:
                cur.append(ch)
        lines.append("".join(cur))
    return "\n".join(lines)
