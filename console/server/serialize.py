"""Records -> JSON-ready dicts for API responses (timestamps as ISO 8601 strings)."""
from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from console.store import NotebookInfo, NotebookRecord, RunRecord


def plain(value: Any) -> Any:
    """Dataclasses, lists and dicts turned into JSON types, recursively."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def notebook_info(nb: NotebookInfo) -> dict[str, Any]:
    d = plain(nb)
    d.pop("cells", None)
    return d  # type: ignore[no-any-return]


def run(r: RunRecord) -> dict[str, Any]:
    d: dict[str, Any] = plain(r)
    if d.get("outputs") is None:
        d.pop("outputs")
    if d.get("metrics") is None:
        d.pop("metrics")
    return d


def notebook(nb: NotebookRecord, runs: dict[str, RunRecord] | None = None) -> dict[str, Any]:
    """A notebook with its cells; with `runs`, each cell gets `last_run` (or null)."""
    d = notebook_info(nb)
    cells = []
    for c in nb.cells:
        cd = plain(c)
        if runs is not None:
            r = runs.get(c.id)
            cd["last_run"] = run(r) if r is not None else None
        cells.append(cd)
    d["cells"] = cells
    return d
