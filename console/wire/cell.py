"""What a cell's run says before any hop stamps it with ids: the kernel's own events (issue 33).

The kernel's engine (the session, the Python runtime, commands, models) emits Output and
Metrics while a cell runs and ends it with a CellOutcome (console/protocols.py) holding a
Result or a Failure. kernel/main.py turns them into the kernel hop's run_* messages
(wire/kernel.py); the headless runner prints them. None of them is a browser event: the server
makes those (wire/browser.py) from what its kernel sent, with its own ids, sequence numbers and
times, so the kernel never speaks the browser's vocabulary (tests/test_rooms.py).

Plain dataclasses, not messages: they cross no pipe as they are. Each has a `type` tag, as a
message has, so a listener can tell them apart by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Output:
    """Text a cell printed. source: "driver" or the Ray actor that printed it ("Network pid=1234");
    stream: stdout | stderr | system | image (text is then one base64 PNG)."""

    type: ClassVar[str] = "output"
    text: str
    source: str = "driver"
    stream: str = "stdout"


@dataclass(frozen=True)
class Metrics:
    """One metrics point (a Keras epoch, log_metrics): numbers by name, at a step when reported."""

    type: ClassVar[str] = "metrics"
    values: dict[str, float]
    source: str = "driver"
    step: int | None = None
    ts: float = 0.0


@dataclass(frozen=True)
class Result:
    """A cell's result table: the first rows (JSON-safe values), the total row count and the
    columns [{"name", "type"}]."""

    type: ClassVar[str] = "result"
    name: str
    columns: list[dict[str, str]]
    rows: list[list[Any]]
    total_rows: int


@dataclass(frozen=True)
class Failure:
    """Why a cell failed, as much as its user may see: kind (parse, sql, python, data, worker, env,
    schema, kernel, interrupted), line/column within the cell, the user's part of the traceback."""

    type: ClassVar[str] = "error"
    kind: str
    message: str
    line: int | None = None
    column: int | None = None
    traceback: str = ""


__all__ = ["Failure", "Metrics", "Output", "Result"]
