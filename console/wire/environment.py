"""A notebook's environment as the notebook keeps it: its requirements and the lock hash last built.

One checker for every way the list travels (the kernel's message, the store, a notebook file, a
kernel's start), because each of those may carry bytes a member's code or a foreign file wrote.
"""
from __future__ import annotations

import re
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

MAX_REQUIREMENTS = 200      # far above a real notebook's list; bounds the store's row and the kernel's message
MAX_REQUIREMENT_CHARS = 512
MAX_LOCK_HASH = 64
START_ENV = "CONSOLE_NOTEBOOK_ENVIRONMENT"  # the server hands a kernel its notebook's list in this variable
_LOCK_HASH = re.compile(r"^[0-9a-f]*$")


class BadEnvironment(ValueError):
    """The value is not an environment this program keeps; the message says what is wrong."""


def clean(value: Any) -> dict[str, Any]:
    """{"requirements": [str, …], "lock_hash": str} from `value`, checked; raises BadEnvironment."""
    if not isinstance(value, dict):
        raise BadEnvironment("an environment is an object with requirements and lock_hash")
    reqs = value.get("requirements", [])
    if not isinstance(reqs, list) or len(reqs) > MAX_REQUIREMENTS:
        raise BadEnvironment(f"requirements must be a list of at most {MAX_REQUIREMENTS}")
    out: list[str] = []
    for r in reqs:
        if not isinstance(r, str) or not r.strip() or len(r) > MAX_REQUIREMENT_CHARS:
            raise BadEnvironment(f"a requirement is text of 1-{MAX_REQUIREMENT_CHARS} characters")
        try:
            Requirement(r)
        except InvalidRequirement as exc:
            raise BadEnvironment(f"{r[:80]!r} is not a requirement: {exc}") from None
        # A direct URL (pkg @ file:///…) would let a notebook point a later kernel at any path.
        if Requirement(r).url:
            raise BadEnvironment(f"{r[:80]!r}: a requirement names a package and versions, not a URL")
        out.append(r.strip())
    lock_hash = value.get("lock_hash", "")
    if not isinstance(lock_hash, str) or len(lock_hash) > MAX_LOCK_HASH or not _LOCK_HASH.match(lock_hash):
        raise BadEnvironment("lock_hash is the layer's hex name")
    return {"requirements": out, "lock_hash": lock_hash}


def clean_or_empty(value: Any) -> dict[str, Any]:
    """clean(value), or the empty environment for a missing or unreadable one (an old row, a foreign file)."""
    try:
        return clean(value) if value is not None else {"requirements": [], "lock_hash": ""}
    except BadEnvironment:
        return {"requirements": [], "lock_hash": ""}
