"""Notebook roles, weakest first, and what each may do: the one list the store, the access
policy (console/server/access.py) and the page (served in GET /api/me) all use.

Each role may do everything the roles before it may; docs/security.md has the long form.
"""
from __future__ import annotations

from typing import Literal

Role = Literal["viewer", "runner", "editor", "owner"]

# Short enough for the share dialog's role picker.
ROLE_CAN: dict[Role, str] = {
    "viewer": "sees outputs",
    "runner": "runs, no edit",
    "editor": "edits",
    "owner": "shares, deletes",
}
ROLES: tuple[Role, ...] = tuple(ROLE_CAN)
ROLE_RANK: dict[str, int] = {role: i + 1 for i, role in enumerate(ROLES)}


def at_least(have: str | None, role: str) -> bool:
    """True when `have` (None: no role at all) is `role` or stronger."""
    return have is not None and ROLE_RANK[have] >= ROLE_RANK[role]


def served() -> list[dict[str, str]]:
    """The roles as the page gets them: [{name, can}], weakest first."""
    return [{"name": role, "can": ROLE_CAN[role]} for role in ROLES]
