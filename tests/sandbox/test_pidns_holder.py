"""The sandboxes' shared PID namespace (console/cluster/pidns.py): a holder that died is replaced,
and the descriptor handed out for the old one stays open (a caller may be about to pass it to a
Popen: closing it handed its number to the next file opened, which that Popen would then get)."""
from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from console.cluster import pidns

pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]


def _holder() -> tuple[list[str], list[str]]:
    return ([shutil.which("bwrap") or "bwrap", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev",
             "--proc", "/proc"], ["cat"])


def test_a_dead_holder_is_replaced_and_the_old_descriptor_stays_open(tmp_path: Path) -> None:
    first = pidns.namespace_fd(tmp_path, _holder)
    assert pidns.namespace_fd(tmp_path, _holder) == first  # cached while the holder lives
    child = pidns._mine[str(tmp_path / pidns._RECORD)][0]
    os.kill(child, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pidns._is_holder_child(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = pidns.namespace_fd(tmp_path, _holder)
    assert second != first
    os.fstat(first)  # before: closed here, its number free for the next open of any thread
    assert os.readlink(f"/proc/self/fd/{first}").startswith("pid:")
    os.kill(pidns._mine[str(tmp_path / pidns._RECORD)][0], signal.SIGKILL)
