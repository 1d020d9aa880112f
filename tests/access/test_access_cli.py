"""mlsql-console users add/list/passwd/set-role, and the demo's login line."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from flask import Flask

from console.cli import main
from console.config import Config, load_config
from console.store import Store
from console.server.auth import check_password

from security_support import login


def test_users_add_list_passwd(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    run = CliRunner().invoke
    assert run(main, ["users", "add", "bob", "--password", "short", "--data-dir", data]).exit_code != 0
    r = run(main, ["users", "add", "bob", "--password", "long enough pw", "--data-dir", data])
    assert r.exit_code == 0, r.output
    assert run(main, ["users", "add", "bob", "--password", "long enough pw", "--data-dir", data]).exit_code != 0
    r = run(main, ["users", "add", "root2", "--admin", "--data-dir", data], input="another pass\nanother pass\n")
    assert r.exit_code == 0, r.output
    listing = run(main, ["users", "list", "--data-dir", data]).output
    assert "bob" in listing and "root2" in listing and "(admin)" in listing
    store = _store(data)
    assert check_password(store.password_hash("bob"), "long enough pw")
    assert store.password_hash("bob") != "long enough pw"  # stored hashed
    store.close()
    r = run(main, ["users", "passwd", "bob", "--password", "a brand new one", "--data-dir", data])
    assert r.exit_code == 0 and "password of bob changed" in r.output
    store = _store(data)
    assert check_password(store.password_hash("bob"), "a brand new one")
    store.close()
    assert run(main, ["users", "passwd", "nobody", "--password", "whatever123", "--data-dir", data]).exit_code != 0


def test_demo_prints_a_login_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import console.demo

    monkeypatch.setattr(console.demo, "DEMO_DATA", tmp_path)
    data = str(tmp_path / "data")
    first = CliRunner().invoke(main, ["demo", "--data-dir", data]).output
    # demo does not know how the server will run: it says what the demo user needs in login mode.
    assert "in login mode" in first and "single-user" not in first and "user: demo  password: " in first
    password = first.split("password: ", 1)[1].split()[0]
    store = _store(data)
    assert check_password(store.password_hash("demo"), password)
    store.close()
    second = CliRunner().invoke(main, ["demo", "--data-dir", data]).output
    assert "password: " not in second and "users passwd demo" in second


def _store(data: str) -> Store:
    """The store the CLI uses for --data-dir `data`, wherever the settings put its database."""
    return Store(load_config({"DATA_DIR": data}).database_url)


def test_users_add_with_a_role_and_set_role(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    run = CliRunner().invoke
    pw = ["--password", "long enough pw", "--data-dir", data]
    r = run(main, ["users", "add", "rita", "--role", "reader", *pw])
    assert r.exit_code == 0 and "(reader)" in r.output, r.output
    assert run(main, ["users", "add", "mo", *pw]).exit_code == 0  # member by default
    assert run(main, ["users", "add", "boss", "--role", "admin", *pw]).exit_code == 0
    assert run(main, ["users", "add", "old", "--admin", *pw]).exit_code == 0  # --admin still works
    r = run(main, ["users", "add", "x", "--admin", "--role", "reader", *pw])
    assert r.exit_code != 0 and "disagree" in r.output
    r = run(main, ["users", "add", "y", "--role", "god", *pw])
    assert r.exit_code != 0 and "'god' is not one of 'reader', 'member', 'admin'" in r.output
    store = _store(data)
    assert {u.username: u.site_role for u in store.list_users()} == {
        "rita": "reader", "mo": "member", "boss": "admin", "old": "admin"}
    store.close()
    listing = run(main, ["users", "list", "--data-dir", data]).output
    assert "rita\trita\t(reader)" in listing and "mo\tmo\t(member)" in listing

    r = run(main, ["users", "set-role", "rita", "member", "--data-dir", data])
    assert r.exit_code == 0 and "rita: reader -> member" in r.output, r.output
    r = run(main, ["users", "set-role", "boss", "reader", "--data-dir", data])
    assert r.exit_code == 0 and "boss: admin -> reader" in r.output
    r = run(main, ["users", "set-role", "nobody", "member", "--data-dir", data])
    assert r.exit_code != 0 and "no user 'nobody'" in r.output
    r = run(main, ["users", "set-role", "rita", "owner", "--data-dir", data])
    assert r.exit_code != 0 and "'owner' is not one of" in r.output
    store = _store(data)
    assert store.get_user_by_name("rita").site_role == "member"
    assert not store.get_user_by_name("boss").is_admin  # is_admin follows the one stored site role
    store.close()


def test_set_role_holds_on_a_running_server_without_a_new_login(mu_app: Flask, cfg: Config) -> None:
    """The CLI writes the server's own database; the logged-in reader's next request is a member's."""
    rita = login(mu_app, "rita")
    assert rita.post("/api/notebooks", json={"name": "n"}).status_code == 403
    data = str(cfg.DATA_DIR)  # the app's own data folder
    r = CliRunner().invoke(main, ["users", "set-role", "rita", "member", "--data-dir", data])
    assert r.exit_code == 0, r.output
    assert rita.post("/api/notebooks", json={"name": "n"}).status_code == 201
    r = CliRunner().invoke(main, ["users", "set-role", "rita", "reader", "--data-dir", data])
    assert r.exit_code == 0, r.output
    assert rita.post("/api/notebooks", json={"name": "m"}).status_code == 403
