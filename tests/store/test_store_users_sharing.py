"""Users, shares and read-only links (the minimal CRUD the security work builds on)."""
from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from console.store import Exists, Invalid, NotFound, Store
from console.store.db import make_engine, migrate


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


def test_site_roles(store: Store) -> None:
    assert store.create_user("m").site_role == "member"  # the default: today's ordinary user
    r = store.create_user("r", site_role="reader")
    assert r.site_role == "reader" and not r.is_admin
    a = store.create_user("a", is_admin=True)  # is_admin=True is a short way of saying admin
    assert a.site_role == "admin" and a.is_admin
    with pytest.raises(Invalid):
        store.create_user("x", site_role="root")
    with pytest.raises(Invalid):
        store.create_user("y", is_admin=True, site_role="reader")
    up = store.set_site_role(r.id, "admin")
    assert up.is_admin and store.get_user(r.id).site_role == "admin" and store.get_user_by_name("r").is_admin
    assert store.set_site_role(r.id, "reader").site_role == "reader" and not store.get_user(r.id).is_admin
    with pytest.raises(Invalid):
        store.set_site_role(r.id, "owner")
    with pytest.raises(NotFound):
        store.set_site_role(999, "member")
    assert {u.username: u.site_role for u in store.list_users()} == {"m": "member", "r": "reader", "a": "admin"}
    # The database itself refuses a role it does not know, whoever writes the row.
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(text("UPDATE users SET site_role = 'root' WHERE username = 'm'"))
    assert store.get_user_by_name("m").site_role == "member"


def test_migration_0003_keeps_admins_and_everything_that_points_at_users(db_url: str) -> None:
    """Upgrading a 0002 database: admins become admin, others member, and no share, login or
    notebook owner is lost on the way (SQLite copies a table in batch mode, which would fire
    ON DELETE CASCADE / SET NULL; the migration alters the table in place instead)."""
    engine = make_engine(db_url)
    migrate(engine, "0002")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (username, display_name, is_admin, created_at) VALUES "
                          "('boss', 'Boss', true, '2026-01-01'), ('bob', 'Bob', false, '2026-01-01')"))
        ids = dict(conn.execute(text("SELECT username, id FROM users")).all())
        conn.execute(text("INSERT INTO notebooks (id, name, folder, owner_id, revision, created_at, updated_at) "
                          "VALUES ('n1', 'nb', '/', :bob, 1, '2026-01-01', '2026-01-01')"), {"bob": ids["bob"]})
        conn.execute(text("INSERT INTO shares (notebook_id, user_id, role, created_at) "
                          "VALUES ('n1', :boss, 'editor', '2026-01-01')"), {"boss": ids["boss"]})
        conn.execute(text("INSERT INTO login_sessions (id, user_id, csrf_token, created_at, last_seen_at, "
                          "expires_at, ip, user_agent) VALUES ('s1', :bob, 'c', '2026-01-01', '2026-01-01', "
                          "'2999-01-01', '', '')"), {"bob": ids["bob"]})
    engine.dispose()
    store = Store(db_url)  # migrates to the head
    try:
        assert {u.username: u.site_role for u in store.list_users()} == {"boss": "admin", "bob": "member"}
        assert store.get_user_by_name("boss").is_admin
        assert store.get_notebook_info("n1").owner_id == ids["bob"]
        assert [(s.user_id, s.role) for s in store.list_shares(notebook_id="n1")] == [(ids["boss"], "editor")]
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM login_sessions")).scalar() == 1
            cols = [c["name"] for c in inspect(conn).get_columns("users")]
        assert "is_admin" not in cols and "site_role" in cols
        assert store.create_user("new").site_role == "member"
    finally:
        store.close()
    # And back: 0002's is_admin comes back from the site role.
    engine = make_engine(db_url)
    migrate_down(engine, "0002")
    with engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT username, is_admin FROM users")).all())
    engine.dispose()
    assert {k: bool(v) for k, v in rows.items()} == {"boss": True, "bob": False, "new": False}


def migrate_down(engine: Engine, revision: str) -> None:
    from alembic import command
    from alembic.config import Config as AlembicConfig

    from console.store.db import MIGRATIONS_DIR

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.execution_options(console_write=True).connect() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)
        conn.commit()


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
