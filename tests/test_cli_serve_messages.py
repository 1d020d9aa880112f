"""What `mlsql-console serve` says at start: its mode, and the demo notebook's URL once `demo` wrote it."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from console.cli import main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_lines(data: Path, single_user: str) -> str:
    """serve's output up to its demo line (it prints that before it serves)."""
    env = {**os.environ, "CONSOLE_SINGLE_USER": single_user}
    cmd = [sys.executable, "-m", "console", "serve", "--dev", "--port", str(_free_port()), "--data-dir", str(data)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                            start_new_session=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("demo notebook:"):
                break
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    return "".join(lines)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import console.demo

    folder = tmp_path_factory.mktemp("serve-messages")
    saved = console.demo.DEMO_DATA
    console.demo.DEMO_DATA = folder  # data "exists": nothing generated
    try:
        result = CliRunner().invoke(main, ["demo", "--data-dir", str(folder / "data")])
    finally:
        console.demo.DEMO_DATA = saved
    assert result.exit_code == 0, result.output
    assert "single-user" not in result.output and "in login mode, log in as user: demo" in result.output
    return folder / "data"


def test_single_user_mode_prints_the_demo_url(data: Path) -> None:
    out = _start_lines(data, "true")
    assert "single-user mode" in out
    assert "demo notebook: http://127.0.0.1:" in out and "/notebooks/" in out


def test_login_mode_never_says_single_user(data: Path) -> None:
    out = _start_lines(data, "false")
    assert "single-user" not in out, out
    assert "login mode: log in at" in out and "demo notebook: http://127.0.0.1:" in out
