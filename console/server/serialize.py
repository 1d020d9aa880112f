"""Records and views -> JSON-ready dicts for API responses (timestamps as ISO 8601 strings)."""
from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from console.outputs.view import RunView, log_url
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
    d: dict[str, Any] = plain(nb)
    d.pop("cells", None)
    return d


def notebook(nb: NotebookRecord) -> dict[str, Any]:
    """A notebook with its cells. Their output is read apart (GET .../runs, run_view below)."""
    return {**notebook_info(nb), "cells": [plain(c) for c in nb.cells]}


def run(r: RunRecord) -> dict[str, Any]:
    """A run record as stored, with all of its outputs and metrics when it holds them (exports)."""
    d: dict[str, Any] = plain(r)
    if d.get("outputs") is None:
        d.pop("outputs")
    if d.get("metrics") is None:
        d.pop("metrics")
    return d


def run_view(view: RunView) -> dict[str, Any]:
    """A stored run as the run API gives it: its facts and the view's events (as the socket replays them)."""
    r = view.run
    return {
        "id": r.id, "notebook_id": r.notebook_id, "cell_id": r.cell_id, "user_id": r.user_id,
        "status": r.status, "started_at": r.started_at.isoformat(),
        "finished_at": r.finished_at.isoformat() if r.finished_at else None,
        "output_bytes": r.output_bytes, "log_url": log_url(r.id),
        "events": [e.to_wire() for e in view.events()],
    }
