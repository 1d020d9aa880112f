"""A kernel that cannot start leaves nothing open behind it: its pipes, its head socket, its wall."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from console.config import load_config
from console.server.sessions import kernel_process
from console.server.sessions.kernel_process import KernelProcess


def _open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def test_a_kernel_that_fails_to_start_closes_every_descriptor_it_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config({"DATA_DIR": str(tmp_path / "data"), "SANDBOX": "off"}, environ={})

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(24, "Too many open files")  # what a server out of descriptors meets

    monkeypatch.setattr(kernel_process.subprocess, "Popen", refuse)
    kp = KernelProcess(cfg, "nb", "nb", on_event=lambda m: None, on_system=lambda s, t: None,
                       on_exit=lambda reason, expected: None)
    before = _open_fds()
    with pytest.raises(OSError, match="Too many open files"):
        kp.start()
    left = _open_fds() - before
    assert not left, {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in left if os.path.exists(f"/proc/self/fd/{fd}")}
