"""The launcher (cluster/limits.py) opens bwrap's seccomp filter on a descriptor nobody holds.

It used to open it on descriptor 9 whatever Popen had passed there. A kernel's command pipe keeps
its number from the server, and a long-lived server hands out 9 sooner or later: the filter then
replaced the pipe, bwrap closed it, and the kernel read EBADF and stopped mid-cell ("exited with
code 0", twice in CI).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from console.cluster import limits

PROBE = """
import json, os, sys
held = {int(n): os.readlink(f"/proc/self/fd/{n}") for n in sys.argv[2].split(",")}
opened = int(sys.argv[1])
print(json.dumps({"opened": opened, "held": held, "data": os.read(opened, 100).decode()}))
"""


def _hold_3_to_9() -> list[int]:
    """Open descriptors 3 to 9 in this process where they are free (as a server's pipes would be),
    so Popen can pass any of them; returns the ones made here, to close after."""
    made: list[int] = []
    for n in range(3, 10):
        # Never dup2 onto n: another thread of the worker may open n between the check and the
        # dup2, which would close its file silently (and the close after, another one).
        while not _open(n):
            r = os.open(os.devnull, os.O_RDONLY)
            made.append(r)  # ours, whatever number it got (a lower one freed meanwhile: n next time)
            if r >= n:
                break
    return made


def _open(n: int) -> bool:
    try:
        os.fstat(n)
        return True
    except OSError:
        return False


def test_the_opened_file_never_replaces_a_passed_descriptor(tmp_path: Path) -> None:
    payload = tmp_path / "filter.bin"
    payload.write_text("the filter")
    made = _hold_3_to_9()
    try:
        passed = [4, 5, 7, 9]  # what Popen passes, as a server's pipes would be: 9 among them
        before = {n: os.readlink(f"/proc/self/fd/{n}") for n in passed}
        argv = limits.launcher((), 0, None, payload) + [
            sys.executable, "-c", PROBE, limits.OPENED_FD, ",".join(map(str, passed))]
        out = subprocess.run(argv, pass_fds=passed, capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        seen = json.loads(out.stdout)
        assert seen["data"] == "the filter"
        assert seen["opened"] not in passed and 3 <= seen["opened"] <= 9
        assert {int(k): v for k, v in seen["held"].items()} == before  # every passed descriptor intact
    finally:
        for n in made:
            os.close(n)


def test_without_a_free_descriptor_the_start_stops(tmp_path: Path) -> None:
    payload = tmp_path / "filter.bin"
    payload.write_text("x")
    made = _hold_3_to_9()
    try:
        argv = limits.launcher((), 0, None, payload) + ["true"]
        out = subprocess.run(argv, pass_fds=list(range(3, 10)), capture_output=True, text=True, timeout=30)
        assert out.returncode == 97  # a start that cannot load its filter does not run unfiltered
    finally:
        for n in made:
            os.close(n)
