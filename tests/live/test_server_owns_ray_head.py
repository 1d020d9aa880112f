"""The server owns the data dir's embedded Ray head: its kernel manager records the server as the
head's owner when it starts (so kernels that come and go do not stop it) and stops it on shutdown.
No head is started here; the record is <data_dir>/server/head.json, in the private folder."""
from __future__ import annotations

import json
import os
from pathlib import Path

from console.config import Config
from console.server import create_app


def _head_record(data_dir: Path) -> dict[str, object] | None:
    path = data_dir / "server" / "head.json"
    return json.loads(path.read_text()) if path.exists() else None


def test_the_server_owns_the_head_and_lets_go_on_shutdown(cfg: Config) -> None:
    tmp_path = cfg.data_dir
    app = create_app({**cfg, "TESTING": True})
    holder = app.extensions["sessions"]
    assert _head_record(tmp_path) is None  # nothing at create_app: gunicorn forks after it
    holder.get()
    record = _head_record(tmp_path)
    assert record is not None and record["owner"] == os.getpid()
    holder.shutdown()
    assert _head_record(tmp_path) is None
    app.extensions["store"].close()


def test_a_server_that_does_not_own_the_head_leaves_it_alone(cfg: Config) -> None:
    tmp_path = cfg.data_dir
    app = create_app({**cfg, "TESTING": True, "RAY_HEAD_OWNER": False})
    app.extensions["sessions"].get()
    assert _head_record(tmp_path) is None
    app.extensions["sessions"].shutdown()
    app.extensions["store"].close()
