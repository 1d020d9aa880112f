"""What the walls cost and how fast a runaway session is stopped (issue 20).

1. The wall itself: what a kernel session's start adds (lease a uid, make its cgroup and folders,
   the launcher, bwrap with seccomp, setpriv), measured on `python -c pass` started the way a
   sandboxed kernel is (server/sessions/kernel_process.py) against the same started plainly; alternating,
   medians. This is the figure the target is about: the kernel's own start is the same both ways.
2. End to end, for information (noisy on a shared machine): two real login-mode servers on
   127.0.0.1, CONSOLE_SANDBOX=on and off; a member opens a new notebook and runs
   `select 1 as a as t;` (kernel start + one cell).
3. On the sandboxed server with CONSOLE_SESSION_MEMORY=1G a Python cell allocates 2 GiB: how long
   until its run has failed naming the limit, and the slowest /api/health meanwhile.

    python bench/sandbox_start.py [--repeats N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "sandbox")]  # the tests' harness

from console.cluster.procs import free_port  # noqa: E402
from console.server.auth import hash_password  # noqa: E402
from tests.support.live_server import REAL_KERNEL, Served, _pythonpath  # noqa: E402
from walled_support import PASSWORD, Member  # noqa: E402

HOG = "--%python\nblob = b'x' * (2 << 30)\n"


def server(data_dir: Path, sandbox: str) -> tuple[Any, Served]:
    from console.server import create_app

    app = create_app({"DATA_DIR": str(data_dir), "TESTING": True, "SINGLE_USER": False, "SANDBOX": sandbox,
                      "SESSION_MEMORY": "1G", "SESSIONS_PER_USER": 0, "RAY_CLIENT_PORT": free_port(),
                      "KERNEL_ENV": {"PYTHONPATH": _pythonpath()}}, kernel_module=REAL_KERNEL)
    app.extensions["store"].create_user("bench", hash_password(PASSWORD))
    return app, Served(app)


def wall_overhead(data_dir: Path, repeats: int) -> tuple[float, float]:
    """Median seconds to run `python -c pass` as a sandboxed kernel session is started, and plainly."""
    import os
    import subprocess

    from console.cluster import sandbox, walls
    from console.cluster.head import short_temp_dir
    from console.config import load_config

    cfg = load_config({"DATA_DIR": str(data_dir)})
    temp = short_temp_dir(cfg.data_dir)
    argv = [sys.executable, "-S", "-c", "pass"]

    def walled() -> float:
        start = time.perf_counter()
        wall = walls.session(cfg, "bench-u1", True, temp)
        cmd, fds = sandbox.wrap(cfg, argv, ray_temp_dir=temp, session_id="bench-u1", wall=wall.wall)
        subprocess.run(cmd, pass_fds=fds, env=sandbox.clean_env(os.environ, wall.env), check=True)
        took = time.perf_counter() - start
        wall.release()
        return took

    def plain() -> float:
        start = time.perf_counter()
        subprocess.run(argv, check=True)
        return time.perf_counter() - start

    walled(), plain()  # warm: the namespace holder, the page cache
    on, off = [], []
    for _ in range(repeats):
        on.append(walled())
        off.append(plain())
    return statistics.median(on), statistics.median(off)


def session_start(member: Member) -> float:
    nb = member.notebook("select 1 as a as t;")
    start = time.perf_counter()
    (run,) = member.run_in(nb, 0)
    took = time.perf_counter() - start
    assert run["status"] == "done", run
    return took


def hog(member: Member, url: str) -> tuple[float, float, str]:
    nb = member.notebook(HOG)
    worst, stop = [0.0], threading.Event()

    def poll() -> None:
        while not stop.is_set():
            t = time.perf_counter()
            with urllib.request.urlopen(url + "/api/health", timeout=30) as resp:
                resp.read()
            worst[0] = max(worst[0], time.perf_counter() - t)
            time.sleep(0.02)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    start = time.perf_counter()
    (run,) = member.run_in(nb, 0)
    took = time.perf_counter() - start
    stop.set()
    poller.join(timeout=35)
    error = next((e.get("message", "") for e in run.get("events", []) if e.get("type") == "error"), "")
    return took, worst[0], error


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wall_on, wall_off = wall_overhead(Path(tmp) / "wall", max(20, args.repeats))
        print(f"python -c pass, as a sandboxed session: median {wall_on * 1000:6.1f} ms")
        print(f"python -c pass, plainly:                median {wall_off * 1000:6.1f} ms")
        walled_app, walled = server(Path(tmp) / "on", "on")
        open_app, unwalled = server(Path(tmp) / "off", "off")
        try:
            on, off = Member(walled.url, "bench"), Member(unwalled.url, "bench")
            session_start(on), session_start(off)  # warm: imports, the uid pool's folder, the page cache
            times: dict[str, list[float]] = {"on": [], "off": []}
            for _ in range(args.repeats):
                times["on"].append(session_start(on))
                times["off"].append(session_start(off))
            med_on, med_off = statistics.median(times["on"]), statistics.median(times["off"])
            print(f"session start, sandboxed:   median {med_on * 1000:7.1f} ms  (runs: "
                  + " ".join(f"{t * 1000:.0f}" for t in times["on"]) + ")")
            print(f"session start, unsandboxed: median {med_off * 1000:7.1f} ms  (runs: "
                  + " ".join(f"{t * 1000:.0f}" for t in times["off"]) + ")")
            print(f"ratio sandboxed/unsandboxed: {med_on / med_off:.2f}x")
            took, worst, error = hog(on, walled.url)
            print(f"2 GiB hog under CONSOLE_SESSION_MEMORY=1G: failed after {took:.2f} s with: {error[:160]}")
            print(f"sandboxed session start overhead: {(wall_on - wall_off) * 1000:.1f} ms (target < 50 ms)")
            print(f"end-to-end first cell, sandboxed minus unsandboxed: {(med_on - med_off) * 1000:.0f} ms (info)")
            print(f"memory hog stopped: {took:.2f} s (target < 10 s)")
            print(f"health during the hog, slowest: {worst * 1000:.0f} ms (target < 200 ms)")
        finally:
            for app, served in ((walled_app, walled), (open_app, unwalled)):
                served.close()
                app.extensions["sessions"].shutdown()
                app.extensions["store"].close()


if __name__ == "__main__":
    main()
