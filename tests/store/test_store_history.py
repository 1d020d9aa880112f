"""Settling history on both databases: saves without a history row gather their authors, settle
into one row once idle (never twice), and a named version reuses the current row."""
from __future__ import annotations

from datetime import timedelta

from console.store import Store, UserRecord
from console.store.models import utcnow


def test_unsettled_saves_become_one_revision_with_their_authors(store: Store, user: UserRecord) -> None:
    bob = store.create_user("bob")
    nb = store.create_notebook("n", owner_id=user.id, cells=[{"id": "c1", "kind": "mlsql", "source": ""}])
    rev = nb.revision
    for i, who in enumerate([user, bob, user, bob]):
        rev = store.update_notebook(nb.id, rev, cells=[{"id": "c1", "kind": "mlsql", "source": "x" * i}],
                                    author_id=who.id, snapshot=False).revision
    assert store.unsettled_notebooks(30, now=utcnow()) == []  # not idle yet
    assert store.unsettled_notebooks(30, now=utcnow() + timedelta(seconds=31)) == [nb.id]
    made = store.settle_notebooks(30, now=utcnow() + timedelta(seconds=31))
    assert [(r.number, r.authors, r.author_id, r.label) for r in made] == [(5, (user.id, bob.id), bob.id, None)]
    assert store.settle_notebooks(0, now=utcnow() + timedelta(seconds=60)) == []
    named = store.snapshot_notebook(nb.id, author_id=user.id, label="v1")
    assert (named.number, named.label, named.id) == (5, "v1", made[0].id)
    assert [r.number for r in store.list_revisions(nb.id)] == [5, 1]
