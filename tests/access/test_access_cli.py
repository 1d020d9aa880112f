"""mlsql-console users add/list/passwd, and the demo's login line."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from console.cli import main
from console.store import Store
from console.server.auth import check_password


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
    store = Store(f"sqlite:///{tmp_path / 'data' / 'console.db'}")
    assert check_password(store.password_hash("bob"), "long enough pw")
    assert store.password_hash("bob") != "long enough pw"  # stored hashed
    store.close()
    r = run(main, ["users", "passwd", "bob", "--password", "a brand new one", "--data-dir", data])
    assert r.exit_code == 0 and "password of bob changed" in r.output
    store = Store(f"sqlite:///{tmp_path / 'data' / 'console.db'}")
    assert check_password(store.password_hash("bob"), "a brand new one")
    store.close()
    assert run(main, ["users", "passwd", "nobody", "--password", "whatever123", "--data-dir", data]).exit_code != 0


def test_demo_prints_a_login_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import console.demo

    monkeypatch.setattr(console.demo, "DEMO_DATA", tmp_path)
    data = str(tmp_path / "data")
    first = CliRunner().invoke(main, ["demo", "--data-dir", data]).output
    assert "single-user mode" in first and "user: demo  password: " in first
    password = first.split("password: ", 1)[1].split()[0]
    store = Store(f"sqlite:///{tmp_path / 'data' / 'console.db'}")
    assert check_password(store.password_hash("demo"), password)
    store.close()
    second = CliRunner().invoke(main, ["demo", "--data-dir", data]).output
    assert "password: " not in second and "users passwd demo" in second
