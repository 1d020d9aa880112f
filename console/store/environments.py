"""A notebook's environment in the store: read, replace, and as it was at a revision (issue 31)."""
from __future__ import annotations

from typing import Any

from console.wire import environment as envspec
from console.store._rows import lock_notebook
from console.store.db import StoreBase
from console.store.errors import Invalid, NotFound
from console.store.models import Notebook
from console.store.revisions import _row


class EnvironmentsMixin(StoreBase):
    def get_environment(self, notebook_id: str, revision: int | None = None) -> dict[str, Any]:
        """The notebook's {"requirements", "lock_hash"}; at `revision` when given (a job's run), where
        that revision's row kept one (rows from before 0011 did not: then the current one)."""
        with self._read() as s:
            nb = s.get(Notebook, notebook_id)
            if nb is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            if revision is not None:
                row = _row(s, notebook_id, revision)
                if row is not None and "environment" in (row.snapshot or {}):
                    return envspec.clean_or_empty(row.snapshot["environment"])
            return envspec.clean_or_empty(nb.environment)

    def set_environment(self, notebook_id: str, environment: Any) -> dict[str, Any]:
        """Replace the notebook's environment (checked). The revision number is not counted: the
        list changes from a run, not an edit, and counting it would make an open editor's next
        save stale. The current revision's history row (a run made it just before) takes the new
        list, so a job or a restore of that revision gets what its cells installed."""
        try:
            env = envspec.clean(environment)
        except envspec.BadEnvironment as exc:
            raise Invalid(str(exc)) from None
        with self._write() as s:
            nb = lock_notebook(s, notebook_id)
            nb.environment = env if env["requirements"] else None
            row = _row(s, notebook_id, nb.revision)
            if row is not None:
                row.snapshot = {**row.snapshot, "environment": nb.environment}  # JSON columns see assignments only
        return env
