"""A head starts Ray worker processes for our drivers' work only, none to sit idle.

Ray's raylet starts one worker per CPU when a head's first driver connects, for jobs without a
runtime env; every driver of ours has one, so those workers never ran anything (a third of the
worker processes of a suite run). RAY_ENV turns that off (console/cluster/head.py). A worker's
log file is named after the job it was started for (`worker-<id>-<job>-<pid>.out`), the nil job
`ffffffff` for one started before any job asked.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from console.cluster import head
from console.cluster.procs import free_ports, stop_process_group
from tests.support.ray_probe import DRIVER, worker_logs


def test_a_heads_first_driver_gets_no_idle_workers_and_its_actor_its_own(tmp_path: Path) -> None:
    temp_dir = head.short_temp_dir(tmp_path)  # in /tmp: the test's own path is too long for Ray's sockets
    info = head.start_head(temp_dir, num_cpus=2, client_port=free_ports(1)[0],
                           autoscaler=False)
    try:
        env = {**os.environ, **head.RAY_ENV}
        env.pop("RAY_ADDRESS", None)
        done = subprocess.run([sys.executable, "-c", DRIVER, info.address], env=env, capture_output=True,
                              text=True, timeout=240)
        assert done.returncode == 0, done.stderr[-3000:]
        actor_pid = int(done.stdout.split()[-1])
        logs = worker_logs(temp_dir)
        idle = [p.name for p in logs if "-ffffffff-" in p.name]
        assert not idle, f"workers started for no job: {idle}"
        assert any(p.name.endswith(f"-{actor_pid}.out") for p in logs), [p.name for p in logs]
    finally:
        if info.pid:
            stop_process_group(info.pid, grace=3.0)
        shutil.rmtree(temp_dir, ignore_errors=True)
