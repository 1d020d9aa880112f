"""A cell worker does not outlive the process that started it (a kernel killed with kill -9)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HOLDER = """
import sys, time
from console.config import load_config
from console.kernel.python_runtime import PythonRuntime
from console.kernel.job import PythonJob

def emit(e):
    if getattr(e, "text", "").startswith("worker "):
        print(e.text, end="", flush=True)

rt = PythonRuntime(load_config({"DATA_DIR": sys.argv[1]}), emit)
rt.run(PythonJob(code="import os, time\\nprint('worker', os.getpid(), flush=True)\\ntime.sleep(600)\\n"))
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_worker_exits_when_its_kernel_is_killed(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        line = holder.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("worker "), line
        worker = int(line.split()[1])
        assert _alive(worker)
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(worker):
            time.sleep(0.2)
        assert not _alive(worker), "the cell worker outlived its kernel"
    finally:
        if holder.poll() is None:
            holder.kill()
