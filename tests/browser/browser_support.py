"""The browser tests' names for the one live-server harness (tests/support/live_server.py).

`start_server(data_dir, env)` serves with gunicorn in a child process whose kernels run the
scripted engine (tests/support/scripted_engine.py); `Server` is its handle.
"""
from __future__ import annotations

from tests.support.live_server import REPO, ServerProcess as Server, start_server, stop_server

__all__ = ["REPO", "Server", "start_server", "stop_server"]
