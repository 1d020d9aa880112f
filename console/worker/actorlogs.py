"""How many lines the cell's Ray actors wrote that have not reached the driver yet.

Ray's log monitor tails each worker's `worker-*.out/.err` file and forwards new lines every
~100 ms, at most ~1000 per file at a time, so the end of a big burst lags behind the cell's last
statement by seconds under load. Waiting for "quiet" alone loses that tail. On this node we can
read the same files: count the lines of this job's worker files and compare with the lines
received per pid. Files on other nodes are not visible; for them the caller falls back to
waiting for a quiet stream.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

from console.actors.capture import RAY_MARKERS

# Lines Ray writes into worker files for itself; the log monitor does not forward them.
_RAY_MARKER = re.compile(b"^(" + b"|".join(re.escape(m.encode()) for m in RAY_MARKERS) + b")")
_FILE = re.compile(r"^worker-[0-9a-f]+-[0-9a-f]+-(\d+)\.(out|err)$")


class ActorLogs:
    """The local worker log files of one Ray job, counted incrementally."""

    def __init__(self, logs_dir: str | os.PathLike[str], job_id: str) -> None:
        self.logs_dir = Path(logs_dir)
        self.job_marker = f":job_id:{job_id}\n".encode()
        self.offsets: dict[Path, int] = {}  # bytes already counted per file of this job
        self.lines: Counter[int] = Counter()  # forwardable lines written, per pid
        self.foreign: set[Path] = set()  # files of other jobs: never read again

    def written(self) -> Counter[int]:
        """Whole lines written so far by this job's workers on this node, per pid."""
        try:
            names = os.listdir(self.logs_dir)
        except OSError:
            return self.lines
        for name in names:
            m = _FILE.match(name)
            if not m:
                continue
            path = self.logs_dir / name
            if path in self.foreign:
                continue
            self._read(path, int(m.group(1)))
        return self.lines

    def _read(self, path: Path, pid: int) -> None:
        start = self.offsets.get(path)
        try:
            with open(path, "rb") as fh:
                if start is None:
                    first = fh.readline()
                    if first != self.job_marker:
                        if first.endswith(b"\n"):
                            self.foreign.add(path)  # another job's worker (a worker serves one job)
                        return
                    start = fh.tell()
                fh.seek(start)
                data = fh.read()
        except OSError:
            return
        end = data.rfind(b"\n")
        self.offsets[path] = start + end + 1  # a line still being written is counted next time
        if end >= 0:
            self.lines[pid] += sum(1 for line in data[:end].split(b"\n") if not _RAY_MARKER.match(line))

    def missing(self, received: Counter[int]) -> int:
        """Lines written on this node that the driver has not received yet."""
        return sum(max(0, n - received.get(pid, 0)) for pid, n in self.written().items())


def for_current_job() -> ActorLogs | None:
    """ActorLogs of the connected Ray driver's job, or None (Ray Client, or no local log dir)."""
    try:
        import ray
        from ray._private import worker as ray_worker

        node = getattr(ray_worker.global_worker, "node", None)
        if node is None:
            return None
        logs_dir = node.get_logs_dir_path()
        job_id = ray.get_runtime_context().get_job_id()
    except Exception:  # Ray Client, or an internal API that moved: fall back to waiting for quiet
        return None
    if not logs_dir or not os.path.isdir(logs_dir):
        return None
    return ActorLogs(logs_dir, job_id)
