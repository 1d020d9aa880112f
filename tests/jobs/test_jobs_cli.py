"""`mlsql-console jobs list|run|enable|disable` on a real data folder."""
from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from console.cli import main
from console.config import load_config
from console.store import Store
from tests.support.live_server import REPO, server_env


def _cli(data: Path, *args: str) -> Result:
    # The command itself, in this process through click's runner: a Python process per command
    # cost 0.8 s each (`init` below runs as `python -m console`, the entry point).
    return CliRunner().invoke(main, ["jobs", *args, "--data-dir", str(data)])


def test_jobs_from_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("CONSOLE_")]:  # as server_env() does for a child
        monkeypatch.delenv(key)
    data = tmp_path / "data"
    assert subprocess.run([sys.executable, "-m", "console", "init", "--data-dir", str(data)], cwd=REPO,
                          env=server_env(), capture_output=True, timeout=120).returncode == 0
    store = Store(load_config({"DATA_DIR": str(data)}).database_url)
    owner = store.create_user("olga")
    nb = store.create_notebook("refresh", owner_id=owner.id,
                               cells=[{"kind": "mlsql", "source": 'set day = "x" where type="defaultParam";'}])
    job = store.create_job(nb.id, owner.id, "nightly", schedule_kind="cron", cron="0 2 * * *",
                           next_run_at=datetime(2030, 1, 1, tzinfo=timezone.utc))
    listed = _cli(data, "list")
    assert listed.exit_code == 0 and f"{job.id}  nightly" in listed.stdout and "cron 0 2 * * * (UTC)" in listed.stdout
    assert _cli(data, "disable", job.id).exit_code == 0
    assert not store.get_job(job.id).enabled and "disabled" in _cli(data, "list").stdout
    enabled = _cli(data, "enable", job.id)
    assert enabled.exit_code == 0 and store.get_job(job.id).enabled and "T02:00" in enabled.stdout
    queued = _cli(data, "run", job.id, "--param", "day=2026-12-01")
    assert queued.exit_code == 0, queued.stderr
    (run,) = store.job_runs(job.id)
    assert (run.trigger, run.status, run.params) == ("manual", "queued", {"day": "2026-12-01"})
    bad = _cli(data, "run", job.id, "--param", "dya=1")
    assert bad.exit_code == 1 and "unknown parameter dya: this notebook declares day" in bad.stderr
    assert "no job" in _cli(data, "run", "nope").stderr
    store.close()
