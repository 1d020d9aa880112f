"""ActorLogs counts the lines a job's workers wrote, as Ray's log monitor would forward them."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from console.worker.actorlogs import ActorLogs


def _write(path: Path, text: str) -> None:
    with open(path, "a") as fh:
        fh.write(text)


def test_counts_this_jobs_lines_per_pid_and_skips_ray_markers(tmp_path: Path) -> None:
    ours = tmp_path / "worker-ab12-ffffffff-101.out"
    ours_err = tmp_path / "worker-ab12-ffffffff-101.err"
    other = tmp_path / "worker-cd34-ffffffff-202.out"
    _write(ours, ":job_id:02000000\n:actor_name:Printer\nA 1\nA 2\n")
    _write(ours_err, ":job_id:02000000\n:actor_name:Printer\noops\n")
    _write(other, ":job_id:01000000\n:actor_name:Old\nnot ours\n")
    logs = ActorLogs(tmp_path, "02000000")
    assert logs.written() == Counter({101: 3})
    assert logs.missing(Counter({101: 1})) == 2
    _write(ours, "A 3\nA 4 still being writ")  # a line without its newline is not counted yet
    assert logs.missing(Counter({101: 3})) == 1
    _write(ours, "ten\n:task_name:burst\n")
    assert logs.missing(Counter({101: 5})) == 0
    assert logs.written() == Counter({101: 5})


def test_a_worker_file_without_its_job_line_yet_is_read_again(tmp_path: Path) -> None:
    f = tmp_path / "worker-ef56-ffffffff-303.out"
    _write(f, "")
    logs = ActorLogs(tmp_path, "03000000")
    assert logs.written() == Counter()
    _write(f, ":job_id:03000000\nhello\n")
    assert logs.written() == Counter({303: 1})
