"""A notebook's environment in the store and what the server takes from a kernel (issue 31).

The kernel runs a member's code, so its environment_changed is checked again: only about the
kernel's current run, only package requirements (no URL that would point a later kernel at a
path), a hex lock hash (it names a folder under <data_dir>/envs)."""
from __future__ import annotations

from typing import Any

import pytest

from console.ids import CellId, NotebookId, RunId
from console.server.sessions import environments
from console.server.sessions.kernel_session import KernelSession, QueuedRun
from console.store import Store, UserRecord
from console.store.errors import Invalid
from console.wire.kernel import EnvironmentChanged


def _session(nb_id: str, run_id: str | None) -> KernelSession:
    s = KernelSession(None, NotebookId(nb_id))
    s.current = QueuedRun(RunId(run_id), CellId("c"), "", "python") if run_id else None
    return s


def test_the_list_is_kept_versioned_restored_and_copied(store: Store, user: UserRecord) -> None:
    nb = store.create_notebook("env", owner_id=user.id, cells=[{"kind": "python", "source": "x = 1"}])
    assert store.get_environment(nb.id) == {"requirements": [], "lock_hash": ""}
    store.set_environment(nb.id, {"requirements": ["pkg==1.0"], "lock_hash": "ab"})
    assert store.get_environment(nb.id, 1)["requirements"] == ["pkg==1.0"]  # the current revision's row
    nb = store.update_notebook(nb.id, nb.revision, cells=[{"kind": "python", "source": "x = 2"}])
    store.set_environment(nb.id, {"requirements": ["pkg==2.0"], "lock_hash": "cd"})
    assert store.get_environment(nb.id, 1)["requirements"] == ["pkg==1.0"]
    assert store.get_environment(nb.id, 2)["requirements"] == ["pkg==2.0"]
    store.restore_revision(nb.id, 1)
    assert store.get_environment(nb.id) == {"requirements": ["pkg==1.0"], "lock_hash": "ab"}
    assert store.get_environment(store.duplicate_notebook(nb.id).id)["requirements"] == ["pkg==1.0"]
    store.set_environment(nb.id, {"requirements": [], "lock_hash": ""})
    assert store.get_environment(nb.id) == {"requirements": [], "lock_hash": ""}


@pytest.mark.parametrize("bad", [
    {"requirements": ["evil @ file:///etc/passwd"], "lock_hash": ""},
    {"requirements": ["not a requirement !!"], "lock_hash": ""},
    {"requirements": ["a"] * 201, "lock_hash": ""},
    {"requirements": ["a" * 513], "lock_hash": ""},
    {"requirements": ["pkg"], "lock_hash": "../../etc"},
    {"requirements": "pkg", "lock_hash": ""},
])
def test_what_a_kernel_sends_is_checked_again(store: Store, user: UserRecord, bad: dict[str, Any]) -> None:
    nb = store.create_notebook("env-bad", owner_id=user.id)
    with pytest.raises(Invalid):
        store.set_environment(nb.id, bad)
    if isinstance(bad["requirements"], list):  # (the wire's decoder refuses a non-list before this)
        environments.save(store, _session(nb.id, "r1"),
                          EnvironmentChanged(RunId("r1"), bad["requirements"], bad["lock_hash"]))
    assert store.get_environment(nb.id)["requirements"] == []


def test_only_the_kernels_current_run_changes_the_list(store: Store, user: UserRecord) -> None:
    nb = store.create_notebook("env-run", owner_id=user.id)
    msg = EnvironmentChanged(RunId("r1"), ["pkg==1.0"], "ab")
    environments.save(store, _session(nb.id, None), msg)  # between runs
    environments.save(store, _session(nb.id, "r2"), msg)  # about another run
    assert store.get_environment(nb.id)["requirements"] == []
    environments.save(store, _session(nb.id, "r1"), msg)
    assert store.get_environment(nb.id)["requirements"] == ["pkg==1.0"]
    # A new kernel of the notebook gets the list, and an empty one too (its cache may remember more).
    assert '"pkg==1.0"' in environments.start_env(store, _session(nb.id, None))["CONSOLE_NOTEBOOK_ENVIRONMENT"]
