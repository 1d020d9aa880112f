"""Roles, weakest first, and what each may do: the one list the store, the access policy
(console/server/access.py) and the page (served in GET /api/me) all use.

Two kinds:
- notebook roles (viewer < runner < editor < owner): what a user may do to one notebook or folder;
- site roles (reader < member < admin): what an account may do at all. A reader only looks at
  what is shared with it: its notebook roles are capped at viewer, so it never runs, edits or
  creates anything; a member creates notebooks and runs code; an admin owns every notebook.

Each role may do everything the roles before it may; docs/security.md has the long form.
"""
from __future__ import annotations

from typing import Literal

Role = Literal["viewer", "runner", "editor", "owner"]
SiteRole = Literal["reader", "member", "admin"]

# Short enough for the share dialog's role picker.
ROLE_CAN: dict[Role, str] = {
    "viewer": "sees outputs",
    "runner": "runs, no edit",
    "editor": "edits",
    "owner": "shares, deletes",
}
ROLES: tuple[Role, ...] = tuple(ROLE_CAN)
ROLE_RANK: dict[str, int] = {role: i + 1 for i, role in enumerate(ROLES)}

SITE_ROLE_CAN: dict[SiteRole, str] = {
    "reader": "views what is shared with it",
    "member": "creates notebooks, runs code",
    "admin": "owns every notebook",
}
SITE_ROLES: tuple[SiteRole, ...] = tuple(SITE_ROLE_CAN)
SITE_RANK: dict[str, int] = {role: i + 1 for i, role in enumerate(SITE_ROLES)}
DEFAULT_SITE_ROLE: SiteRole = "member"
# The strongest notebook role each site role can hold; shares above it count as this.
SITE_CAP: dict[SiteRole, Role] = {"reader": "viewer", "member": "owner", "admin": "owner"}


def at_least(have: str | None, role: str) -> bool:
    """True when `have` (None: no role at all) is `role` or stronger."""
    return have is not None and ROLE_RANK[have] >= ROLE_RANK[role]


def site_at_least(have: str | None, role: str) -> bool:
    """True when site role `have` (None: anonymous) is `role` or stronger."""
    return have is not None and SITE_RANK[have] >= SITE_RANK[role]


def capped(site_role: str, role: str | None) -> str | None:
    """Notebook role `role` as an account of `site_role` holds it: never above the site's cap."""
    if role is None:
        return None
    cap = SITE_CAP[site_role]  # type: ignore[index]
    return role if ROLE_RANK[role] <= ROLE_RANK[cap] else cap


def served() -> list[dict[str, str]]:
    """The notebook roles as the page gets them: [{name, can}], weakest first."""
    return [{"name": role, "can": ROLE_CAN[role]} for role in ROLES]


def served_site() -> list[dict[str, str]]:
    """The site roles as the page gets them: [{name, can, cap}], weakest first."""
    return [{"name": role, "can": SITE_ROLE_CAN[role], "cap": SITE_CAP[role]} for role in SITE_ROLES]
