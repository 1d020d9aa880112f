"""`include notebook.`name``: which notebook a kernel may include, answered for the user it runs for.

A kernel runs for one (user, notebook) (console/server/sessions/kernels.py) and asks the server for another
notebook's cells by name. The name is resolved only among the notebooks that user may read (viewer
or above, console/server/access.py), so a notebook the user cannot open is "not found", exactly as
over HTTP, and another user's notebook of the same name neither leaks nor shadows the user's own.
A name that several readable notebooks share is an error listing them, rather than a guess.
"""
from __future__ import annotations

import logging
from typing import Any

from console.ids import NotebookId, UserId
from console.wire.kernel import NotebookCells, NotebookRequest

log = logging.getLogger(__name__)

READ_ROLE = "viewer"  # including shows the cells to the includer's kernel: reading them


def _place(nb: Any) -> str:
    folder = nb.folder.rstrip("/")
    return f"{folder}/{nb.name}"


def _describe(store: Any, nb: Any) -> str:
    owner = ""
    if nb.owner_id is not None:
        try:
            owner = f", owner {store.get_user(nb.owner_id).username}"
        except Exception:  # a deleted owner still leaves a notebook to name
            owner = ""
    return f"{_place(nb)} (id {nb.id}{owner})"


def readable_named(store: Any, user_id: UserId | None, name: str) -> list[Any]:
    """The notebooks called `name` that this user may read, oldest first."""
    from console.roles import at_least
    from console.server.access import role_of

    if user_id is None:
        return []  # a kernel with no user behind it reads nothing of anyone's
    user = store.get_user(user_id)
    return [nb for nb in store.find_notebooks(name=name) if at_least(role_of(store, user, nb), READ_ROLE)]


def notebook_cells(store: Any, user_id: UserId | None, request: NotebookRequest) -> NotebookCells:
    """The answer to a kernel's notebook_request: the cells, or why there are none."""
    try:
        found = readable_named(store, user_id, request.name)
        if not found:
            return NotebookCells(request.request_id, error=f"no notebook named {request.name!r}")
        if len(found) > 1:
            listed = "; ".join(_describe(store, nb) for nb in found)
            return NotebookCells(request.request_id, error=(
                f"the name {request.name!r} is ambiguous: {len(found)} notebooks you can read have it "
                f"({listed}); rename one of them"))
        nb = store.get_notebook(NotebookId(found[0].id))
    except Exception:  # the kernel must get an answer; the details are ours
        log.exception("reading notebook %r for an include failed", request.name)
        return NotebookCells(request.request_id, error="the notebook store could not be read")
    return NotebookCells(request.request_id, [[c.kind, c.source] for c in nb.cells])
