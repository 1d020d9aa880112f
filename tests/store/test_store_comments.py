"""Comments on cells in the store (SQLite and PostgreSQL): threads, replies, anchors, resolve and
reopen, deletion, and comments kept across the notebook's edits and its cells' deletion."""
from __future__ import annotations

import pytest

from console.store import Invalid, NotFound, Store, UserRecord
from console.store.comments import MAX_COMMENT_CHARS, Anchor


def _notebook(store: Store, owner: UserRecord) -> tuple[str, list[str]]:
    nb = store.create_notebook("commented", owner_id=owner.id,
                               cells=[{"kind": "mlsql", "source": "select 1 as a;"},
                                      {"kind": "markdown", "source": "# notes"}])
    return nb.id, [c.id for c in nb.cells]


def test_threads_replies_and_resolving(store: Store, user: UserRecord) -> None:
    bob = store.create_user("bob")
    nb, (c0, c1) = _notebook(store, user)
    first = store.create_comment(nb, user.id, "why select 1?", cell_id=c0, anchor=Anchor(0, 6, "select"))
    assert first.thread_id is None and first.cell_id == c0 and first.anchor == Anchor(0, 6, "select")
    assert not first.resolved and not first.deleted and first.edited_at is None
    reply = store.create_comment(nb, bob.id, "a smoke test", thread_id=first.id)
    assert reply.thread_id == first.id and reply.cell_id == c0 and reply.anchor is None
    other = store.create_comment(nb, bob.id, "a heading", cell_id=c1)
    assert [c.id for c in store.list_comments(nb)] == [first.id, reply.id, other.id]

    with pytest.raises(Invalid, match="first comment"):
        store.create_comment(nb, user.id, "nested", thread_id=reply.id)  # replies are one level deep
    with pytest.raises(Invalid, match="anchor"):
        store.create_comment(nb, user.id, "anchored reply", thread_id=first.id, anchor=Anchor(0, 1, "s"))
    with pytest.raises(NotFound):
        store.create_comment(nb, user.id, "on nothing", cell_id="nosuchcell")
    with pytest.raises(Invalid):
        store.create_comment(nb, user.id, "   ", cell_id=c0)
    with pytest.raises(Invalid):
        store.create_comment(nb, user.id, "x" * (MAX_COMMENT_CHARS + 1), cell_id=c0)
    with pytest.raises(Invalid):
        store.create_comment(nb, user.id, "nul \x00 here", cell_id=c0)
    with pytest.raises(Invalid):
        store.create_comment(nb, user.id, "backwards", cell_id=c0, anchor=Anchor(5, 2, ""))

    done = store.resolve_thread(nb, first.id, True, bob.id)
    assert done.resolved and done.resolved_by == bob.id and done.resolved_at is not None
    again = store.resolve_thread(nb, first.id, False, user.id)
    assert not again.resolved and again.resolved_by is None and again.resolved_at is None
    with pytest.raises(Invalid, match="first comment"):
        store.resolve_thread(nb, reply.id, True, user.id)

    edited = store.edit_comment(nb, reply.id, "a smoke test, kept")
    assert edited.text == "a smoke test, kept" and edited.edited_at is not None


def test_a_comment_belongs_to_its_notebook(store: Store, user: UserRecord) -> None:
    nb, (c0, _) = _notebook(store, user)
    elsewhere, _ = _notebook(store, user)
    c = store.create_comment(nb, user.id, "here", cell_id=c0)
    for call in (lambda: store.get_comment(elsewhere, c.id), lambda: store.edit_comment(elsewhere, c.id, "moved"),
                 lambda: store.resolve_thread(elsewhere, c.id, True, user.id),
                 lambda: store.delete_comment(elsewhere, c.id),
                 lambda: store.create_comment(elsewhere, user.id, "reply", thread_id=c.id)):
        with pytest.raises(NotFound):
            call()
    assert store.get_comment(nb, c.id).text == "here"
    assert store.list_comments(elsewhere) == []


def test_deleting_comments_keeps_other_peoples_replies(store: Store, user: UserRecord) -> None:
    bob = store.create_user("bob")
    nb, (c0, _) = _notebook(store, user)
    lone = store.create_comment(nb, user.id, "alone", cell_id=c0)
    store.delete_comment(nb, lone.id)
    assert store.list_comments(nb) == []

    first = store.create_comment(nb, user.id, "a question", cell_id=c0, anchor=Anchor(0, 6, "select"))
    reply = store.create_comment(nb, bob.id, "an answer", thread_id=first.id)
    store.delete_comment(nb, first.id)  # bob's reply stays, under a deleted first comment
    kept = {c.id: c for c in store.list_comments(nb)}
    assert kept[first.id].deleted and kept[first.id].text == "" and kept[reply.id].text == "an answer"
    with pytest.raises(Invalid):
        store.edit_comment(nb, first.id, "back again")
    store.delete_comment(nb, reply.id)  # the last reply of a deleted first comment: the thread goes
    assert store.list_comments(nb) == []


def test_comments_stay_with_their_cell_across_revisions_and_deletion(store: Store, user: UserRecord) -> None:
    nb, (c0, c1) = _notebook(store, user)
    on0 = store.create_comment(nb, user.id, "on the query", cell_id=c0)
    on1 = store.create_comment(nb, user.id, "on the notes", cell_id=c1)
    # The text changes and the cells swap places: each comment stays with its cell.
    rec = store.get_notebook(nb)
    rec = store.update_notebook(nb, rec.revision, cells=[{"id": c1, "kind": "markdown", "source": "# new notes"},
                                                        {"id": c0, "kind": "mlsql", "source": "select 2 as b;"}])
    assert {c.id: c.cell_id for c in store.list_comments(nb)} == {on0.id: c0, on1.id: c1}
    # The cell goes: its comment stays, on a cell the notebook no longer has.
    rec = store.delete_cell(nb, c0, rec.revision)
    assert c0 not in {c.id for c in rec.cells}
    assert {c.id: c.cell_id for c in store.list_comments(nb)} == {on0.id: c0, on1.id: c1}
    # Restoring the revision that had it brings the cell back to its comment.
    first = min(r.number for r in store.list_revisions(nb))
    rec = store.restore_revision(nb, first)
    assert c0 in {c.id for c in rec.cells}
    # Deleting the notebook deletes its comments.
    store.delete_notebook(nb)
    with pytest.raises(NotFound):
        store.list_comments(nb)
    with pytest.raises(NotFound):
        store.get_comment(nb, on1.id)
