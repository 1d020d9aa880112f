"""What a read-only link shows of a failed cell: its message and the user's own traceback lines.

The worker already leaves out the console's own frames (console/worker/cell.py), but a traceback
still holds frames of the libraries and of Python itself (json, pandas, Ray's workers, a remote
actor's whole stack inside a RayTaskError's text), and each names a file on the server. Anyone
holding a link sees the page, so there only the cell's frames (File "<cell>") are kept, with their
source lines; every other frame becomes one line saying how many were left out.
"""
from __future__ import annotations

import re
from typing import Any

_FRAME = re.compile(r'^(\s*)File "([^"]*)", line \d+')
CELL_FILE = "<cell>"


def user_lines(traceback: str) -> str:
    """`traceback` with only the cell's frames; the exception lines and chain markers stay."""
    out: list[str] = []
    skipped = 0
    skipping_indent: int | None = None
    for line in traceback.splitlines():
        frame = _FRAME.match(line)
        if frame:
            skipping_indent = None
            if frame.group(2) == CELL_FILE:
                if skipped:
                    out.append(f"  ({skipped} frames of library code left out)")
                    skipped = 0
                out.append(line)
            else:
                skipped += 1
                skipping_indent = len(frame.group(1))
            continue
        if skipping_indent is not None:
            stripped = line.lstrip()
            # A skipped frame's source line and its ^^^ markers are indented deeper than "File".
            if stripped and len(line) - len(stripped) > skipping_indent:
                continue
            skipping_indent = None
        if skipped:
            out.append(f"  ({skipped} frames of library code left out)")
            skipped = 0
        out.append(line)
    if skipped:
        out.append(f"  ({skipped} frames of library code left out)")
    return "\n".join(out) + ("\n" if traceback.endswith("\n") else "")


def published_error(error: dict[str, Any] | None) -> dict[str, Any] | None:
    """An ErrorEvent's wire form as a link shows it: the traceback cut to the user's lines."""
    if not error:
        return error
    shown = dict(error)
    if isinstance(shown.get("traceback"), str):
        shown["traceback"] = user_lines(shown["traceback"])
    return shown
