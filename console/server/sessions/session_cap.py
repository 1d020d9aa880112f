"""CONSOLE_SESSIONS_PER_USER: how many kernels one user may have running at once.

The ninth notebook a user runs (with the default 8) is refused, naming the notebooks whose
kernels run, so the user can stop one. Counted by the server's session manager (server/sessions/kernels.py
calls `check` before it starts a kernel).

Runs in: the server (its session manager).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from console.store.errors import StoreError


class TooManySessions(StoreError):
    """The user already has CONSOLE_SESSIONS_PER_USER kernels running; they are named."""

    status = 429


class _Session(Protocol):
    @property
    def user_id(self) -> Any: ...

    @property
    def notebook_id(self) -> str: ...

    @property
    def lane(self) -> str: ...

    @property
    def kernel(self) -> Any: ...

    @property
    def started_by(self) -> Any: ...


def check(cfg: Mapping[str, Any], store: Any, session: _Session, sessions: Iterable[_Session], starter: Any) -> None:
    """Refuse `starter` a kernel for `session` when they already started CONSOLE_SESSIONS_PER_USER.

    A notebook's session is shared by its runners, so a kernel counts for who started it
    (started_by), not for everyone who runs cells in it. sessions: the manager's sessions
    (server/sessions/kernels.py's KernelSession); those whose kernel lives count. store: names the
    notebooks in the refusal (its get_notebook).
    """
    cap = int(cfg.get("SESSIONS_PER_USER") or 0)
    if cap <= 0 or starter is None:
        return
    mine = [s for s in sessions
            if s is not session and s.started_by == starter and s.kernel is not None and s.kernel.alive()]
    if len(mine) < cap:
        return
    names = sorted({_name(store, s.notebook_id) + (f" (job {s.lane})" if s.lane else "") for s in mine})
    idle = cfg.get("KERNEL_IDLE_SECONDS")
    raise TooManySessions(
        f"you already have {len(mine)} kernels running, the most one user may have (CONSOLE_SESSIONS_PER_USER = "
        f"{cap}): {', '.join(names)}. One of them must stop first (a kernel idle for {idle} s stops by "
        "itself).")


def _name(store: Any, notebook_id: str) -> str:
    try:
        return f"“{store.get_notebook(notebook_id).name}”"
    except Exception:  # deleted meanwhile: its id still says which
        return f"notebook {notebook_id}"


__all__ = ["TooManySessions", "check"]
