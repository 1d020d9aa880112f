"""A Ray driver as ours are (a runtime env of its own) that starts one actor and prints its pid:
what tests/python_cells/test_head_workers.py and bench/ray_first_driver.py run against a head.

    python -c DRIVER <gcs address>
"""
from __future__ import annotations

from pathlib import Path

DRIVER = """
import os, sys, ray
ray.init(address=sys.argv[1], runtime_env={"env_vars": {"CONSOLE_PROBE": "1"}}, logging_level="WARNING")

@ray.remote
class Probe:
    def pid(self):
        return os.getpid()

print(ray.get(Probe.remote().pid.remote()))
"""


def worker_logs(temp_dir: Path) -> list[Path]:
    """The head's worker log files: `worker-<id>-<job>-<pid>.out`, job `ffffffff` for a worker
    started before any job asked for it."""
    return sorted(temp_dir.glob("session_2*/logs/worker-*.out"))
