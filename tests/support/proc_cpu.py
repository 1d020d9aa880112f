"""Where a whole run's CPU goes, by kind of process: a sampler to start beside `make test` or `.ci/run`.

cpu_log.py measures per test, and only in a serial run. This one sees every process on the machine
(kernels, Ray's services and workers, Chromium, servers): each 0.5 s it reads /proc/<pid>/stat and,
the first time it meets a pid, its command line; a process's figure is the CPU it had used when last
seen (one that lives less than 0.5 s is missed), less what it had used already when the sampler
started, for processes running then. Not used by `make test`.

    python -m tests.support.proc_cpu sample OUT.tsv     # until SIGTERM or Ctrl-C
    python -m tests.support.proc_cpu summary OUT.tsv    # CPU-s and count by kind, and Ray workers by head
"""
from __future__ import annotations

import collections
import os
import re
import signal
import sys
import time
from typing import Any

from console.cluster.procs import all_stat_fields

_HZ = os.sysconf("SC_CLK_TCK")
_KINDS = (  # (text in the command line, kind): the first that matches
    ("default_worker.py", "ray worker process"), ("exec(eval(sys.stdin", "pytest worker"),
    ("raylet/raylet", "ray raylet"), ("gcs_server", "ray gcs"), ("log_monitor", "ray log monitor"),
    ("ray.util.client.server", "ray client server"), ("dashboard.py", "ray dashboard"),
    ("runtime_env", "ray runtime-env agent"), ("monitor.py", "ray autoscaler monitor"),
    ("bin/ray ", "ray start"), ("chrom", "chromium"), ("console.kernel", "kernel"),
    ("console.worker", "cell worker"), ("tests.support.serve", "test server"),
    ("mlsql-console serve", "make run server"), ("postgres", "postgres"), ("bwrap", "bwrap"),
    (" pip ", "pip"), ("mypy", "mypy"), ("ruff", "ruff"),
)


def kind(cmdline: str) -> str:
    for text, name in _KINDS:
        if text in cmdline:
            return name
    return "other: " + (cmdline.split(" ", 1)[0][-40:] or "?")


def sample(out: str, every: float = 0.5) -> None:
    """pid, cpu seconds when last seen, first and last seen, command line: a TSV row per process."""
    seen: dict[tuple[int, int], list[Any]] = {}  # -> [cpu, first seen, last seen, cmdline, cpu before]
    stop = []
    first_round = True
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    try:
        while not stop:
            now = time.time()
            for pid, fields in all_stat_fields().items():
                try:
                    cpu = (int(fields[11]) + int(fields[12])) / _HZ
                    key = (pid, int(fields[19]))  # a pid and its start time: one process
                    if key not in seen:
                        with open(f"/proc/{pid}/cmdline", "rb") as fh:
                            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")[:3000]
                        seen[key] = [cpu, now, now, cmd, cpu if first_round else 0.0]
                    else:
                        seen[key][0], seen[key][2] = cpu, now
                except (OSError, ValueError, IndexError):
                    continue  # ended meanwhile, or not ours to read
            first_round = False
            time.sleep(every)
    except KeyboardInterrupt:
        pass
    with open(out, "w") as fh:
        for (pid, _), (cpu, first, last, cmd, before) in seen.items():
            fh.write(f"{pid}\t{cpu - before:.2f}\t{first:.1f}\t{last:.1f}\t{cmd.replace(chr(9), ' ')}\n")


def summary(path: str) -> str:
    by_kind: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    by_head: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    with open(path) as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                continue
            cpu, cmd = float(parts[1]), parts[4]
            if not cmd.strip():  # the kernel's own threads
                continue
            k = kind(cmd)
            by_kind[k][0] += 1
            by_kind[k][1] += cpu
            if k == "ray worker process":  # its head: the session folder's parent, in its arguments
                found = re.search(r"(/\S*?)/session_[0-9_-]+", cmd)
                head = found.group(1) if found else "?"
                by_head[head][0] += 1
                by_head[head][1] += cpu

    def table(counts: dict[str, list[float]]) -> list[str]:
        ranked = sorted(counts.items(), key=lambda x: -x[1][1])
        return [f"{cpu:9.1f} CPU-s {int(n):6d}  {name}" for name, (n, cpu) in ranked]

    return "\n".join([*table(by_kind), "ray worker processes by head:", *table(by_head)])


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("sample", "summary"):
        sys.exit(__doc__)
    if sys.argv[1] == "sample":
        sample(sys.argv[2])
    else:
        print(summary(sys.argv[2]))
