"""The product's notebook file format: read and write `{"format": "mlsql-console-notebook", ...}`.

Used by export/import in the web API, by `mlsql-console demo` and open to the headless runner
(stdlib only, so any room may import it). docs/notebook-format.md describes the format.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

FORMAT = "mlsql-console-notebook"
VERSION = 1
KINDS = ("mlsql", "python", "markdown")


class NotebookFileError(ValueError):
    """The data is not a notebook file this version can read; the message says what is wrong."""


def parse_notebook(data: Any) -> dict[str, Any]:
    """Check a decoded notebook file; returns {"name", "cells": [{"kind", "source", "id"?, "view"?}], "metadata"}.

    Unknown fields are ignored so that newer exports with extra information still import.
    """
    if not isinstance(data, Mapping):
        raise NotebookFileError("a notebook file is a JSON object")
    if data.get("format") != FORMAT:
        raise NotebookFileError(f'"format" must be "{FORMAT}"')
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise NotebookFileError('"version" must be an integer')
    if version > VERSION:
        raise NotebookFileError(f"version {version} is newer than this program reads ({VERSION})")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise NotebookFileError('"name" must be a non-empty string')
    cells_in = data.get("cells")
    if not isinstance(cells_in, list):
        raise NotebookFileError('"cells" must be a list')
    cells: list[dict[str, Any]] = []
    for i, cell in enumerate(cells_in, 1):
        if not isinstance(cell, Mapping):
            raise NotebookFileError(f"cell {i} must be an object")
        kind, source = cell.get("kind"), cell.get("source")
        if kind not in KINDS:
            raise NotebookFileError(f'cell {i}: "kind" must be one of {", ".join(KINDS)}')
        if not isinstance(source, str):
            raise NotebookFileError(f'cell {i}: "source" must be a string')
        out: dict[str, Any] = {"kind": kind, "source": source}
        if "id" in cell:
            if not isinstance(cell["id"], str):
                raise NotebookFileError(f'cell {i}: "id" must be a string')
            out["id"] = cell["id"]
        if cell.get("view") is not None:
            # Checked in full where it is stored (console/store/views.py); here only its shape.
            if not isinstance(cell["view"], Mapping):
                raise NotebookFileError(f'cell {i}: "view" must be an object')
            out["view"] = dict(cell["view"])
        cells.append(out)
    metadata = data.get("metadata", {})
    if not isinstance(metadata, Mapping):
        raise NotebookFileError('"metadata" must be an object')
    return {"name": name.strip(), "cells": cells, "metadata": dict(metadata)}


def dump_notebook(
    name: str, cells: Iterable[Mapping[str, Any]], metadata: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A notebook file's JSON object; each cell keeps kind, source, and id/view/outputs when present."""
    out_cells = []
    for c in cells:
        cell = {"kind": c["kind"], "source": c["source"]}
        for key in ("id", "view", "outputs"):
            if c.get(key) is not None:
                cell[key] = c[key]
        out_cells.append(cell)
    data: dict[str, Any] = {"format": FORMAT, "version": VERSION, "name": name, "cells": out_cells}
    if metadata:
        data["metadata"] = dict(metadata)
    return data


def load_notebook_file(path: str | Path) -> dict[str, Any]:
    """Read a `.json` notebook file, or a `.mlsql` file as one MLSQL cell named after the file."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix == ".mlsql":
        return {"name": p.stem, "cells": [{"kind": "mlsql", "source": text}], "metadata": {}}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookFileError(f"{p.name} is not JSON: {exc}") from exc
    return parse_notebook(data)
