"""What a head's first driver costs with Ray's worker prestart (the default) and without (RAY_ENV).

Starts a head as the product does (console/cluster/head.py start_head, 2 CPUs), then one driver
as ours are (a runtime env of its own) that starts one actor and calls it, and reports, heads
with and without `RAY_prestart_worker_first_driver` alternated `--repeats` times:
- the driver's seconds from its start to the actor's answer;
- the CPU seconds of the head's processes (its process tree, the workers included, read from
  /proc just before the head stops) plus the driver's own;
- the worker processes started for no job (the prestarted ones: idle for ever, since our actors
  ask for a runtime env they were not started with).
CPU seconds stay comparable on a busy machine; the seconds to the answer do not.

    python bench/ray_first_driver.py [--repeats N]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from console.cluster import head  # noqa: E402
from console.cluster.procs import free_ports, stop_process_group  # noqa: E402
from sockets_load import cpu_seconds  # noqa: E402  (bench/: the head's process tree, from /proc)
from tests.support.ray_probe import DRIVER, worker_logs  # noqa: E402

TARGET_CPU = 1.0  # without prestart against with: must not cost more
def _one(prestart: bool) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory(prefix="bench-first-driver-") as tmp:
        temp_dir = head.short_temp_dir(Path(tmp))
        info = head.start_head(temp_dir, num_cpus=2, client_port=free_ports(1)[0],
                               autoscaler=False, env={"RAY_prestart_worker_first_driver": "1" if prestart else "0"})
        try:
            env = {**os.environ, **head.RAY_ENV}
            env.pop("RAY_ADDRESS", None)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.monotonic()
            subprocess.run([sys.executable, "-c", DRIVER, info.address], env=env, check=True,
                           capture_output=True, timeout=300)
            seconds = time.monotonic() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            driver_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            time.sleep(2.0)  # the head settles (an actor's worker exits with its driver's job)
            assert info.pid
            cpu = cpu_seconds(info.pid) + driver_cpu
            idle = sum("-ffffffff-" in p.name for p in worker_logs(temp_dir))
        finally:
            if info.pid:
                stop_process_group(info.pid, grace=3.0)
    return seconds, cpu, idle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs: dict[bool, list[tuple[float, float, int]]] = {True: [], False: []}
    for _ in range(args.repeats):
        for prestart in (True, False):
            runs[prestart].append(_one(prestart))
    for prestart, label in ((True, "with prestart"), (False, "without")):
        r = runs[prestart]
        print(f"{label}: first actor answer (s) {', '.join(f'{s:.1f}' for s, _, _ in r)}; "
              f"CPU (s) {', '.join(f'{c:.1f}' for _, c, _ in r)}; idle workers {', '.join(str(i) for _, _, i in r)}")
    cpu_on = statistics.median(c for _, c, _ in runs[True])
    cpu_off = statistics.median(c for _, c, _ in runs[False])
    t_on = statistics.median(s for s, _, _ in runs[True])
    t_off = statistics.median(s for s, _, _ in runs[False])
    print(f"ray_first_driver_cpu_without_vs_with_prestart: {cpu_off / cpu_on:.2f} x (target <= {TARGET_CPU})")
    print(f"ray_first_driver_cpu_saved: {cpu_on - cpu_off:.1f} s (reported)")
    print(f"ray_first_driver_answer_without_vs_with_prestart: {t_off / t_on:.2f} x (reported)")
    print(f"ray_first_driver_idle_workers_without: {max(i for _, _, i in runs[False])} (target 0)")


if __name__ == "__main__":
    main()
