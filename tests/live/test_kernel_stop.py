"""A kernel the server stops adds nothing to the output of the session's last run.

The kernel's farewell on stderr ("the server closed its command pipe; the kernel stops") went to
on_system, which gives a line with no cell running to the session's last run: a run already
ended, and stored, changed after it was done (a job's run on the Jobs page, rebuilt under a click
in a fresh-clone run). It goes to the server's log now.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from console.config import load_config
from console.server.sessions.kernel_process import KernelProcess
from console.wire.kernel import KernelReady


def test_a_kernel_stopped_by_the_server_says_goodbye_to_the_log_not_to_a_run(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cfg = load_config({"DATA_DIR": str(tmp_path / "data"), "SANDBOX": "off"}, environ={})
    ready, ended = threading.Event(), threading.Event()
    system: list[str] = []
    exits: list[tuple[str, bool]] = []

    def on_event(msg: Any) -> None:
        if isinstance(msg, KernelReady):
            ready.set()

    def on_exit(reason: str, expected: bool) -> None:
        exits.append((reason, expected))
        ended.set()

    kp = KernelProcess(cfg, "nb", "nb", on_event=on_event, on_system=lambda stream, text: system.append(text),
                       on_exit=on_exit)
    caplog.set_level(logging.INFO, logger="console.server.sessions.kernel_process")
    kp.start()
    try:
        assert ready.wait(120), f"the kernel never said it was ready; it wrote: {system}"
        before = list(system)
    finally:
        kp.stop()
    assert ended.wait(30)
    assert exits[0][1] is True, exits
    assert system == before, f"lines given to the last run after the stop: {system[len(before):]}"
    assert "closed its command pipe" in caplog.text  # the server's log has the farewell


def test_what_a_stopping_kernel_floods_its_stderr_with_is_cut_for_the_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A kernel runs anyone's code: asked to stop, it may write megabytes before the SIGKILL comes.
    The server's log keeps the first STOPPING_SAID characters of it, and no run gets any."""
    import os

    from console.server.sessions import kernel_process

    cfg = load_config({"DATA_DIR": str(tmp_path / "data"), "SANDBOX": "off"}, environ={})
    system: list[str] = []
    kp = KernelProcess(cfg, "nb", "nb", on_event=lambda m: None, on_system=lambda s, t: system.append(t),
                       on_exit=lambda reason, expected: None)
    kp._stopping = True  # as stop() sets it before closing the command pipe
    read_fd, write_fd = os.pipe()

    def flood() -> None:
        with os.fdopen(write_fd, "wb") as out:
            for _ in range(64):
                out.write(b"y" * 65535 + b"\n")

    writer = threading.Thread(target=flood)
    writer.start()
    caplog.set_level(logging.INFO, logger="console.server.sessions.kernel_process")
    kp._read_text(os.fdopen(read_fd, "rb"), "stderr")
    writer.join()
    logged = sum(len(r.getMessage()) for r in caplog.records)
    assert system == []
    assert 0 < logged <= min(kernel_process.STOPPING_SAID + 200, 16_384), logged  # 4 MB written
