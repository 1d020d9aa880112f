"""Where the suite's CPU goes: with CONSOLE_TEST_CPU_LOG=path, each test's line in that file.

A test's cost is mostly outside pytest's process (Ray heads, kernels, Chromium, servers started
with start_new_session), so no rusage of ours sees it. In a serial run the machine does nothing
else, so the machine's busy time between a test's start and its end (/proc/stat, setup and
teardown included) is that test's, and so is the most memory in use meanwhile (MemTotal less
MemAvailable, sampled every 0.25 s). Lines: nodeid, wall seconds, CPU seconds, peak memory MB
in use, tab separated.
Read by bench/suite_cpu.py; not used by `make test`.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Generator
from typing import Any

import pytest

ENV = "CONSOLE_TEST_CPU_LOG"
_HZ = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU seconds the whole machine spent busy since boot (every field of /proc/stat's cpu line
    but idle and iowait)."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    # guest and guest_nice are counted in user and nice already
    return (sum(fields[:8]) - idle) / _HZ


def used_mb() -> int:
    """Memory in use on the machine, MB: MemTotal less MemAvailable."""
    info = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            info[key] = int(value.split()[0])
    return (info["MemTotal"] - info["MemAvailable"]) // 1024


class CpuLog:
    def __init__(self, path: str) -> None:
        self.out = open(path, "a", buffering=1)
        self.peak = used_mb()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while True:
            self.peak = max(self.peak, used_mb())
            time.sleep(0.25)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> Generator[None, None, None]:
        wall, busy = time.monotonic(), busy_seconds()
        self.peak = used_mb()
        yield
        self.out.write(f"{item.nodeid}\t{time.monotonic() - wall:.2f}\t{busy_seconds() - busy:.2f}\t{self.peak}\n")


def register(config: pytest.Config) -> None:
    path = os.environ.get(ENV)
    if path:
        config.pluginmanager.register(CpuLog(path), "cpu-log")


def summarize(log: str) -> dict[str, dict[str, Any]]:
    """A serial run's log as tests/support/lanes.py's table: each unit's seconds (summed) and the most
    memory above what was in use before it started (the least of the five tests' peaks before it)."""
    from tests.support.lanes import unit_of

    rows = [line.rstrip("\n").split("\t") for line in open(log) if line.strip()]
    seconds: dict[str, float] = {}
    memory: dict[str, int] = {}
    peaks = [int(r[3]) for r in rows]
    first: dict[str, int] = {}  # each file's first row
    for i, (nodeid, wall, _cpu, _peak) in enumerate(rows):
        path = nodeid.split("::", 1)[0]
        first.setdefault(path, i)
        unit = unit_of(nodeid)
        seconds[unit] = round(seconds.get(unit, 0.0) + float(wall), 1)
        before = min(peaks[max(0, first[path] - 5):first[path]] or [peaks[i]])
        memory[unit] = max(memory.get(unit, 0), peaks[i] - before)
    return {"seconds": dict(sorted(seconds.items(), key=lambda kv: -kv[1])),
            "memory_mb": dict(sorted(memory.items(), key=lambda kv: -kv[1]))}


if __name__ == "__main__":  # python -m tests.support.cpu_log LOG > tests/support/suite_costs.json
    import json
    import sys

    print(json.dumps(summarize(sys.argv[1]), indent=1))
