"""Completion and hover for the editor, answered from the session's live catalog."""
from __future__ import annotations

from typing import Any, Mapping

from console.kernel.host import SessionHost


def complete(session: SessionHost, args: Mapping[str, Any]) -> dict[str, Any]:
    """args: source, cursor (offset), kind. Answer: {"from": offset, "to": offset, "items": [...]}."""
    raise LookupError("completion is not built yet")


def inspect(session: SessionHost, args: Mapping[str, Any]) -> dict[str, Any]:
    """args: name (a table). Answer: {"name", "columns": [{"name", "type"}], "rows"}."""
    raise LookupError("inspect is not built yet")
