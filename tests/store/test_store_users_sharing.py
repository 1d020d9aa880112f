"""Users, shares and read-only links (the minimal CRUD the security work builds on)."""
from __future__ import annotations

import pytest

from console.store import Exists, Invalid, NotFound, Store


def test_users(store: Store) -> None:
    u = store.create_user("bob", password_hash="h1")
    assert u.has_password and u.display_name == "bob" and not u.is_admin
    with pytest.raises(Exists):
        store.create_user("bob")
    with pytest.raises(Invalid):
        store.create_user("bad name")
    admin = store.ensure_user("admin", is_admin=True)
    assert store.ensure_user("admin").id == admin.id and admin.is_admin
    store.set_password(u.id, "h2")
    assert store.password_hash("bob") == "h2" and store.password_hash("nobody") is None
    assert [x.username for x in store.list_users()] == ["admin", "bob"]
    with pytest.raises(NotFound):
        store.get_user(999)


def test_shares(store: Store, user) -> None:
    nb = store.create_notebook("n", "/t")
    first = store.set_share(user.id, "viewer", notebook_id=nb.id)
    again = store.set_share(user.id, "editor", notebook_id=nb.id)
    assert again.id == first.id and again.role == "editor"
    store.set_share(user.id, "runner", folder_path="/t/")
    assert [(s.notebook_id, s.folder_path, s.role) for s in store.list_shares(user_id=user.id)] == [
        (nb.id, None, "editor"), (None, "/t", "runner")]
    with pytest.raises(Invalid):
        store.set_share(user.id, "god", notebook_id=nb.id)
    with pytest.raises(Invalid):
        store.set_share(user.id, "viewer")
    store.delete_share(first.id)
    assert len(store.list_shares(notebook_id=nb.id)) == 0
    store.delete_notebook(nb.id)
    assert len(store.list_shares()) == 1


def test_links(store: Store, user) -> None:
    nb = store.create_notebook("n")
    link = store.create_link(nb.id, created_by=user.id)
    assert store.get_link(link.token).active
    revoked = store.revoke_link(link.token)
    assert not revoked.active and not store.get_link(link.token).active
    assert [ln.token for ln in store.list_links(nb.id)] == [link.token]
    with pytest.raises(NotFound):
        store.get_link("nope")
