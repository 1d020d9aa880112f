"""A gigantic log: 50 MB printed by a cell, to its log file and a viewer's head and tail, beside /dev/null.

Two sides, measured in one run:

- plain: a plain Python process prints the same lines (500,000 lines of 100 bytes) to
  /dev/null; the time of its print loop.
- ours: the production server (gunicorn, in a child process) with a scripted kernel whose cell
  prints the same 50 MB in 100 kB writes (tests/support/scripted_engine.py `big`), and a
  python-socketio viewer in this process; from the run command to the viewer's `done`, after
  every chunk (head and tail included) reached it and the log file. The kernel is warmed first.

Then: the log download is checked byte for byte, a second viewer's replay is head + hidden + tail,
and the database's growth (console.db and its -wal) is reported.

Then a real Python cell prints the same lines with print() (a warm cell worker, 3 runs, the
median): its text takes another path first, the worker's stdout (console/worker/channel.py) and
its pipe to the kernel; `--no-python` leaves it out.

    python bench/big_log.py [--mb 50] [--no-python]
"""
from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests' harness: tests/support

from console.outputs.live import ViewerLog  # noqa: E402
from tests.support.clients import Viewer  # noqa: E402
from tests.support.live_server import start_server  # noqa: E402

LINE = "x" * 99 + "\n"
PLAIN = """
import sys, time
lines = {n}
t = time.perf_counter()
for i in range(lines):
    print("x" * 99)
sys.stdout.flush()
sys.stderr.write(repr(time.perf_counter() - t))
"""


def plain_seconds(lines: int) -> float:
    with open("/dev/null", "w") as null:
        done = subprocess.run([sys.executable, "-c", PLAIN.format(n=lines)], stdout=null,
                              stderr=subprocess.PIPE, text=True, check=True)
    return float(done.stderr.strip())


def db_bytes(data_dir: Path) -> int:
    """The database's size once its write-ahead log is folded in (the -wal file is reused, and
    SQLite's auto-checkpoint keeps it near 4 MB whatever is written)."""
    db = data_dir / "server" / "console.db"
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in db.parent.glob("console.db*"))


def run_and_wait(v: Viewer, nb: dict[str, Any], cell: int, timeout: float) -> tuple[str, float]:
    t0 = time.perf_counter()
    ack = v.command("run_cell", notebook_id=nb["id"], cell_id=nb["cells"][cell]["id"])
    assert ack["ok"], ack
    run_id = ack["run_ids"][0]
    try:
        status = v.wait_status(run_id, "done", "error", timeout=timeout)
    except AssertionError:  # its message would print the last events: megabytes of x
        raise SystemExit(f"run {run_id} did not end within {timeout} s; "
                         f"the viewer has {len(v.outputs(run_id))} chunks") from None
    assert status["status"] == "done", status["status"]
    return run_id, time.perf_counter() - t0


def download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=300) as resp:
        return resp.read()  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--no-python", dest="python", action="store_false", help="leave out the Python cell")
    args = parser.parse_args()
    size = args.mb * 1_000_000
    lines = size // len(LINE)
    expected = (LINE * lines).encode()

    plains = sorted(plain_seconds(lines) for _ in range(3))
    plain = plains[0]
    print(f"plain Python, {lines} prints to /dev/null: {plain:.3f} s (best of 3; median {plains[1]:.3f} s)")

    with tempfile.TemporaryDirectory(prefix="big-log-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        server = start_server(data_dir)
        try:
            sources = ["--script\nprint 3\n", f"--script\nbig {size}\n"]
            if args.python:
                sources.append(("python", "print('warm')\n"))  # type: ignore[arg-type]
                sources.append(("python", f"for i in range({lines}):\n    print('x' * 99)\n"))  # type: ignore[arg-type]
            nb = server.notebook("big-log", *sources)
            v = Viewer(server.url)
            assert v.command("join", notebook_id=nb["id"])["ok"]
            run_and_wait(v, nb, 0, 120)  # the kernel is up and warm
            before = db_bytes(data_dir)
            run_id, ours = run_and_wait(v, nb, 1, 600)
            growth = db_bytes(data_dir) - before
            seen = ViewerLog()
            events = [e for e in v.events if e.get("run_id") == run_id]
            for e in events:
                seen.feed(e)
            shown = seen.text.encode()
            # Past the inline budget the viewer is sent the head, a growing marker and the latest
            # tail (console/outputs/live.py): together they must be the whole output.
            assert expected.startswith(shown[:1000]) and expected.endswith(shown[-1000:])
            assert len(shown) + seen.hidden_bytes == len(expected), (len(shown), seen.hidden_bytes)
            print(f"ours, {args.mb} MB through the server to a viewer and the log file: {ours:.3f} s "
                  f"({len(v.outputs(run_id))} chunks and "
                  f"{sum(e['type'] == 'output_hidden' for e in events)} markers sent live)")

            t = time.perf_counter()
            got = download(f"{server.url}/api/runs/{run_id}/log")
            fetch = time.perf_counter() - t
            assert got == expected, f"the download differs ({len(got)} bytes, expected {len(expected)})"
            files = list((data_dir / "server" / "logs").rglob(f"{run_id}.log.gz"))
            print(f"log download: {len(got)} bytes, byte for byte, in {fetch:.2f} s; "
                  f"file {files[0].stat().st_size} bytes compressed")

            later = Viewer(server.url)
            assert later.command("join", notebook_id=nb["id"])["ok"]
            later.wait_status(run_id, "done", timeout=60)
            kinds = [e["type"] for e in later.events if e.get("run_id") == run_id and e["type"].startswith("output")]
            head_tail = "".join(e["text"] for e in later.outputs(run_id))
            assert "output_hidden" in kinds and expected.startswith(head_tail[:1000].encode())
            assert expected.endswith(head_tail[-1000:].encode())
            print(f"replay to a later viewer: {len(later.outputs(run_id))} chunks "
                  f"({len(head_tail.encode())} bytes) and one hidden marker")
            later.close()

            if args.python:
                run_and_wait(v, nb, 2, 120)  # the cell worker is up (a first Python cell starts it)
                runs = sorted(run_and_wait(v, nb, 3, 600)[1] for _ in range(3))
                py = runs[1]  # the median of 3: one run varied 2.4-3.0x on a shared machine
                # Median against median (the plain prints vary as much as the cell on a shared machine).
                print(f"big_log_python_cell_vs_devnull_best: {py / plain:.2f} x (info: against the fastest plain run)")
                print(f"big_log_python_cell_vs_devnull: {py / plains[1]:.2f} x ({py:.3f} s, min {runs[0]:.3f}, "
                      f"max {runs[2]:.3f}: a Python cell's {lines} print() calls, warm worker, to the viewer's "
                      "done; medians of 3 both sides; target <= 3.0)")
            v.close()
        finally:
            server.stop()

    ratio = ours / plain
    print(f"big_log_seconds: {ours:.3f} s (plain {plain:.3f} s)")
    print(f"big_log_vs_devnull: {ratio:.2f} x (target <= 3.0)")
    print(f"big_log_db_growth: {growth / 1e6:.2f} MB (target < 2.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
