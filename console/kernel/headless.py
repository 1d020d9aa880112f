"""Headless runs (`mlsql-console run FILE`): a .mlsql script or a notebook JSON file in a fresh session."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Callable, Mapping

from console.config import Config
from console.kernel.results import format_table
from console.kernel.session import Session
from console.lang import params as notebook_params
from console.wire.cell import Failure, Metrics, Output, Result
from console.wire.kernel import ReplayInputs

NOTEBOOK_FORMAT = "mlsql-console-notebook"
MANIFEST_FORMAT = "mlsql-console-manifest"
Out = Callable[[str], None]


def read_cells(path: Path) -> list[tuple[str, str]]:
    """[(kind, source)] of a notebook JSON file, or one MLSQL cell for any other file."""
    text = path.read_text(encoding="utf-8")
    if not text.lstrip().startswith("{"):
        return [("mlsql", text)]
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != NOTEBOOK_FORMAT:
        raise ValueError(f"{path} is not a notebook file (expected \"format\": \"{NOTEBOOK_FORMAT}\")")
    cells = doc.get("cells")
    if not isinstance(cells, list):
        raise ValueError(f"{path}: \"cells\" must be a list")
    return [(str(c.get("kind", "mlsql")), str(c.get("source", ""))) for c in cells if isinstance(c, dict)]


def file_loader(base: Path) -> Callable[[str], list[tuple[str, str]]]:
    """include notebook.`name` in headless mode: `name` is a file path relative to the script."""
    def load(name: str) -> list[tuple[str, str]]:
        for candidate in (base / name, base / f"{name}.json", base / f"{name}.mlsql"):
            if candidate.is_file():
                return read_cells(candidate)
        raise FileNotFoundError(f"no file {name} (or {name}.json, {name}.mlsql) next to the script in {base}")

    return load


class _Printer:
    """Prints output events as `[source] line`; a progress bar's \\r redraws print once, when done.

    Chunks from one source may end mid-line (a Keras bar redrawing itself); the unfinished line
    waits per source until its newline arrives, and only what a terminal would finally show of it
    (the text after its last carriage return) is printed.
    """

    def __init__(self, out: Out) -> None:
        self.out = out
        # The unfinished line of each source, in the pieces it came in (joined when it ends: a
        # 100 MB line without a newline was copied whole for every 4 kB chunk).
        self.pending: dict[str, list[str]] = {}

    def __call__(self, message: object) -> None:
        if isinstance(message, Output):
            if "\n" not in message.text:
                if message.text:
                    self.pending.setdefault(message.source, []).append(message.text)
                return
            text = "".join(self.pending.pop(message.source, [])) + message.text
            *lines, rest = text.split("\n")
            for line in lines:
                self.out(f"[{message.source}] {_visible(line)}")
            if rest:
                self.pending[message.source] = [rest]
        elif isinstance(message, Metrics):
            values = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in message.values.items())
            step = f" step={message.step}" if message.step is not None else ""
            self.out(f"[{message.source}] metrics{step}: {values}")

    def flush(self) -> None:
        for source, pieces in self.pending.items():
            rest = _visible("".join(pieces))
            if rest:
                self.out(f"[{source}] {rest}")
        self.pending.clear()


def _visible(line: str) -> str:
    """What a terminal shows of a line after its redraws: the text after the last \\r, minus \\b."""
    return line.rstrip("\r").rsplit("\r", 1)[-1].replace("\b", "")


def describe_error(cell: int, error: Failure) -> str:
    where = f"cell {cell}"
    if error.line is not None:
        where += f", line {error.line}"
        if error.column is not None:
            where += f", column {error.column}"
    return f"{where}: {error.message}"


def read_environment(path: Path) -> dict[str, Any] | None:
    """The notebook file's environment (metadata.environment, as an export writes it), or None."""
    from console.wire import environment as envspec

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    if not isinstance(meta, dict) or "environment" not in meta:
        return None
    try:
        return envspec.clean(meta["environment"])
    except envspec.BadEnvironment as exc:
        raise ValueError(f"{path}: metadata.environment: {exc}") from None


def run_file(path: str | Path, cfg: Config, cell: int | None = None, out: Out = print,
             params: Mapping[str, str] | None = None, manifest: str | Path | None = None,
             replay: ReplayInputs | None = None, results: dict[int, Result] | None = None) -> int:
    """Run the file's cells in order (or only cell N, 1-based); 0 when all succeed, 1 at the first failure.

    params: values for the notebook's parameters (console/lang/params.py); an undeclared one is refused.
    manifest: a JSON file to write the run's manifest to (what each cell read and wrote), also
    when a cell fails; a headless run has no server, so nothing in it is checked against the lake.
    replay: read the inputs as a recorded run read them (`mlsql-console replay`, console/kernel/replay.py);
    results: filled with each cell's result, by cell number.
    """
    path = Path(path)
    try:
        cells = read_cells(path)
        environment = read_environment(path) if path.suffix.lower() != ".mlsql" else None
        overrides = notebook_params.check(notebook_params.declared(cells), params or {}, cells)
    except (OSError, ValueError) as exc:
        out(f"error: {exc}")
        return 2
    cells = [(kind, notebook_params.apply(kind, source, overrides)) for kind, source in cells]
    numbered = list(enumerate(cells, start=1))
    if cell is not None:
        if not 1 <= cell <= len(cells):
            out(f"error: {path} has no cell {cell} (it has {len(cells)})")
            return 2
        numbered = [numbered[cell - 1]]
    printer = _Printer(out)
    session = Session(cfg, printer, session_id=f"headless-{path.stem}",
                      notebook_loader=file_loader(path.resolve().parent))
    ran: list[dict[str, Any]] = []
    if environment is not None:
        session.preset_environment(environment)
    session.replay = replay
    try:
        for n, (kind, source) in numbered:
            if kind == "markdown":
                continue
            outcome = session.run_cell(source, kind=kind, cell=n)
            ran.append({"cell": n, "entries": [_entry(e) for e in outcome.io], "dropped": outcome.io_dropped})
            printer.flush()
            if outcome.error is not None:
                out(f"error: {describe_error(n, outcome.error)}")
                if outcome.error.kind == "parse" and outcome.error.traceback:
                    out(outcome.error.traceback)
                return 1
            if outcome.result is not None:
                if results is not None:
                    results[n] = outcome.result
                out(f"-- cell {n}: {outcome.result.name}")
                out(format_table(outcome.result))
        if session.environment_lock():  # the run's record of the environment it ran in
            out(f"-- environment: lock {session.environment_lock()}")
        return 0
    finally:
        session.shutdown()
        if manifest is not None:
            Path(manifest).write_text(json.dumps({"format": MANIFEST_FORMAT, "file": str(path), "params": dict(
                overrides), "cells": ran}, indent=1, ensure_ascii=False), encoding="utf-8")


def _entry(e: Any) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(e).items() if v not in (None, "")}
