"""The browser tests' names for the one live-server harness (tests/support/live_server.py).

`start_server(data_dir, env)` serves with gunicorn in a child process whose kernels run the
scripted engine (tests/support/scripted_engine.py); `Server` is its handle.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.live_server import REPO, ServerProcess as Server, start_server, stop_server

__all__ = ["REPO", "Server", "start_login_server", "start_server", "stop_server"]


def start_login_server(data: Path, user: str = "alice", password: str = "correct horse") -> Server:
    """A server in login mode (no single-user mode) with one account made through the CLI."""
    data.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "console", "users", "add", user, "--password", password,
                    "--data-dir", str(data)], cwd=REPO, check=True, capture_output=True, timeout=60)
    return start_server(data, {"CONSOLE_SINGLE_USER": "false"})
