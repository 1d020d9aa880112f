"""The data dir's split: the server's private folder, the old layout's migration, the startup refusal.

Each of these fails on the code before the split, which kept the database and the key in the
data dir itself (where a cell's relative path found them) and started without any sandbox.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from console.cluster import sandbox
from console.config import ensure_secret_key, load_config, prepare_data_dir
from console.server.auth import hash_password
from console.store import Store
from tests.support.live_server import server_env


def test_an_old_data_dir_is_moved_into_the_private_folder_and_nothing_is_lost(tmp_path: Path) -> None:
    from console.server import create_app

    data = tmp_path / "data"
    data.mkdir()
    old = Store(f"sqlite:///{data / 'console.db'}")
    old.create_user("alice", hash_password("correct horse battery"))
    old.close()
    (data / "secret_key").write_text("the-old-key\n")
    app = create_app({"DATA_DIR": str(data), "TESTING": True})
    try:
        private = data / "server"
        assert not (data / "console.db").exists() and not (data / "secret_key").exists()
        assert (private / "console.db").stat().st_mode & 0o777 == 0o600
        assert private.stat().st_mode & 0o777 == 0o700
        assert app.config["SECRET_KEY"] == "the-old-key"  # logins made before the move stay valid
        assert app.extensions["store"].get_user_by_name("alice").username == "alice"
    finally:
        app.extensions["store"].close()


def test_a_second_old_copy_is_moved_aside_never_left_readable(tmp_path: Path) -> None:
    cfg = load_config({"DATA_DIR": str(tmp_path / "data")})
    key = ensure_secret_key(cfg)
    (cfg.data_dir / "secret_key").write_text("a stale copy\n")
    moved = prepare_data_dir(cfg)
    assert len(moved) == 1 and not (cfg.data_dir / "secret_key").exists()
    assert ensure_secret_key(cfg) == key
    assert [p.read_text() for p in cfg.private_dir.glob("secret_key.stale-*")] == ["a stale copy\n"]


def test_the_kernels_settings_carry_no_store_url_or_key() -> None:
    import json

    from console.server.sessions.kernel_process import kernel_config

    cfg = load_config({"DATABASE_URL": "postgresql://console:hunter2@db/console", "SECRET_KEY": "k-s1"})
    sent = json.loads(kernel_config(cfg))
    assert sent["DATABASE_URL"] is None and sent["SECRET_KEY"] is None
    assert "hunter2" not in json.dumps(sent) and "k-s1" not in json.dumps(sent)


def _serve(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`mlsql-console serve` where bwrap cannot be found (an empty PATH); it must refuse, not listen."""
    no_bwrap = tmp_path / "bin"
    no_bwrap.mkdir(exist_ok=True)
    full = server_env({"PATH": str(no_bwrap), "CONSOLE_DATA_DIR": str(tmp_path / "data"), **env})
    return subprocess.run([sys.executable, "-m", "console", "serve", "--port", "0"], env=full,
                          capture_output=True, text=True, timeout=60)


def test_a_login_mode_server_without_bwrap_refuses_to_start(tmp_path: Path) -> None:
    done = _serve(tmp_path, CONSOLE_HOST="127.0.0.1")
    assert done.returncode != 0
    assert "refusing to start" in done.stderr and "CONSOLE_SANDBOX=off" in done.stderr, done.stderr[-2000:]


def test_sandbox_on_without_bwrap_refuses_even_single_user(tmp_path: Path) -> None:
    done = _serve(tmp_path, CONSOLE_SINGLE_USER="true", CONSOLE_SANDBOX="on")
    assert done.returncode != 0 and "CONSOLE_SANDBOX=on" in done.stderr, done.stderr[-2000:]


def test_sandbox_off_is_said_loudly() -> None:
    line = sandbox.check_startup({"SANDBOX": "off"}, login_mode=True)
    assert line == sandbox.OFF_WARNING and "NOT walled off" in line and "cookie-signing key" in line
