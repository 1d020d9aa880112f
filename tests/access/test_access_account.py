"""Accounts in the UI, server side: changing one's own password (never another's, never with a wrong
current one, throttled like a login), the workspace listings with owner and role, "shared with me",
an admin's own notebooks apart from everyone's, and who may name a version."""
from __future__ import annotations

from typing import Any

from flask import Flask

from security_support import PASSWORD, login

NEW = "a much longer secret"


def test_password_change_refuses_a_wrong_current_password_and_another_account(mu_app: Flask, as_user: Any) -> None:
    alice = as_user("alice")
    wrong = alice.post("/api/me/password", json={"old_password": "not it at all", "new_password": NEW})
    assert wrong.status_code == 403 and "old password" in wrong.json["error"]
    other = alice.post("/api/me/password", json={"username": "vera", "old_password": PASSWORD, "new_password": NEW})
    assert other.status_code == 403 and "only your own" in other.json["error"]
    # Neither changed anything: both still log in with the old password, not the new one.
    assert login(mu_app, "vera").get("/api/me").json["user"]["username"] == "vera"
    assert mu_app.test_client().post("/api/login", json={"username": "vera", "password": NEW}).status_code == 401
    short = alice.post("/api/me/password", json={"old_password": PASSWORD, "new_password": "short"})
    assert short.status_code == 400 and "8 characters" in short.json["error"]
    ok = alice.post("/api/me/password", json={"username": "alice", "old_password": PASSWORD, "new_password": NEW})
    assert ok.status_code == 200
    assert mu_app.test_client().post("/api/login", json={"username": "alice", "password": NEW}).status_code == 200


def test_password_change_needs_the_csrf_token(mu_app: Flask) -> None:
    client = mu_app.test_client()
    assert client.post("/api/login", json={"username": "rudy", "password": PASSWORD}).status_code == 200
    r = client.post("/api/me/password", json={"old_password": PASSWORD, "new_password": NEW})
    assert r.status_code == 403 and "CSRF" in r.json["error"]


def test_wrong_current_passwords_are_throttled_like_logins(mu_app: Flask, as_user: Any) -> None:
    eddie = as_user("eddie")
    codes = [eddie.post("/api/me/password", json={"old_password": f"guess {i}", "new_password": NEW}).status_code
             for i in range(7)]
    assert codes[:5] == [403] * 5 and codes[-1] == 429
    # Locked even with the right password now, like a login would be.
    assert eddie.post("/api/me/password", json={"old_password": PASSWORD, "new_password": NEW}).status_code == 429


def _share(owner: Any, nb: dict[str, Any], user: str, role: str) -> None:
    assert owner.post(f"/api/notebooks/{nb['id']}/shares", json={"user": user, "role": role}).status_code in (200, 201)


def test_listing_has_owner_and_role_and_shared_with_me(mu_app: Flask, as_user: Any) -> None:
    alice, vera, eddie = as_user("alice"), as_user("vera"), as_user("eddie")
    mine = alice.post("/api/notebooks", json={"name": "alice's", "folder": "/a"}).json
    theirs = eddie.post("/api/notebooks", json={"name": "eddie's", "folder": "/e"}).json
    _share(alice, mine, "vera", "viewer")
    _share(eddie, theirs, "vera", "editor")
    _share(eddie, theirs, "alice", "viewer")
    shared = vera.get("/api/workspace/shared").json["notebooks"]
    assert [(n["name"], n["owner"], n["role"], n["mine"]) for n in shared] == [
        ("alice's", "alice", "viewer", False), ("eddie's", "eddie", "editor", False)]
    assert [n["name"] for n in alice.get("/api/workspace/shared").json["notebooks"]] == ["eddie's"]
    listed = alice.get("/api/workspace?folder=/a").json
    assert [(n["name"], n["owner"], n["role"], n["mine"]) for n in listed["notebooks"]] == [
        ("alice's", "alice", "owner", True)]
    assert vera.get("/api/workspace?folder=/a").json["notebooks"][0]["role"] == "viewer"
    assert vera.get("/api/workspace?scope=everything").status_code == 400
    assert mu_app.test_client().get("/api/workspace").status_code == 401


def test_an_admins_own_notebooks_are_kept_apart_from_everyones(mu_app: Flask, as_user: Any) -> None:
    from console.server.auth import hash_password

    mu_app.extensions["store"].create_user("root", hash_password(PASSWORD), site_role="admin")
    root, alice = login(mu_app, "root"), as_user("alice")
    alice.post("/api/notebooks", json={"name": "alice's", "folder": "/team"})
    root.post("/api/notebooks", json={"name": "root's", "folder": "/"})
    mu_app.extensions["store"].create_notebook("nobody's", "/")  # no owner: nobody else's work
    own = root.get("/api/workspace?folder=/").json
    assert own["admin"] is True and [n["name"] for n in own["notebooks"]] == ["nobody's", "root's"]
    assert "/team" not in [f["path"] for f in own["folders"]]
    everyone = root.get("/api/workspace?folder=/&scope=all").json
    assert "/team" in [f["path"] for f in everyone["folders"]]
    team = root.get("/api/workspace?folder=/team&scope=all").json["notebooks"]
    assert [(n["name"], n["owner"], n["role"]) for n in team] == [("alice's", "alice", "owner")]
    # A member's "mine" and "all" are the same thing: what they may see.
    assert alice.get("/api/workspace?folder=/team&scope=all").json["notebooks"] == \
        alice.get("/api/workspace?folder=/team").json["notebooks"]


def test_a_viewer_may_not_name_a_version(mu_app: Flask, as_user: Any) -> None:
    alice, vera = as_user("alice"), as_user("vera")
    nb = alice.post("/api/notebooks", json={"name": "n", "cells": []}).json
    _share(alice, nb, "vera", "viewer")
    assert vera.get(f"/api/notebooks/{nb['id']}/revisions").status_code == 200
    assert vera.post(f"/api/notebooks/{nb['id']}/revisions", json={"label": "mine"}).status_code == 403
    assert alice.post(f"/api/notebooks/{nb['id']}/revisions", json={"label": "mine"}).status_code == 201


def test_single_user_work_belongs_to_an_account_that_can_log_in_later(cfg: Any) -> None:
    """Notebooks made without a login are the account 'admin''s; after `mlsql-console users passwd
    admin` the same data dir served with logins lets admin in, and they are admin's own."""
    from click.testing import CliRunner

    from console.cli import main
    from console.server import create_app

    single = create_app({**cfg, "SINGLE_USER": True, "TESTING": True})
    made = single.test_client().post("/api/notebooks", json={"name": "made alone", "cells": []}).json
    single.extensions["store"].close()
    assert made["owner_id"] is not None

    out = CliRunner().invoke(main, ["users", "passwd", "admin", "--password", NEW, "--data-dir", cfg.DATA_DIR])
    assert out.exit_code == 0, out.output

    multi = create_app({**cfg, "SINGLE_USER": False, "SANDBOX": "off", "TESTING": True})
    try:
        assert multi.test_client().get("/api/workspace").status_code == 401  # no more free admin
        admin = login(multi, "admin", NEW)
        own = admin.get("/api/workspace").json["notebooks"]
        assert [(n["name"], n["owner"], n["mine"]) for n in own] == [("made alone", "admin", True)]
    finally:
        multi.extensions["store"].close()
