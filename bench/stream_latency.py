"""Output latency and burst throughput: a print -> its arrival at a Socket.IO client, nothing lost.

Two measurements, each with a paced phase (two sources print a time-stamped line every 20 ms;
latency = arrival time - print time, same clock) and a burst phase (10,000 lines from two
sources at once; every line must arrive, in order per source):

- "session": the scripted kernel engine (tests/support) prints from two threads, so only our path is measured
  (kernel pipe, 50 ms batcher, store, Socket.IO);
- "ray": a Python cell whose two Ray actors print, the path the issue asks about; Ray's own
  log forwarding adds ~50 ms. Needs Ray.

    python bench/stream_latency.py [--lines N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests' harness: tests/support

from tests.support.clients import Viewer  # noqa: E402
from tests.support.live_server import LiveServer  # noqa: E402

RAY_CELL = """--%python
import time
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Printer:
    def paced(self, name, count, every):
        for i in range(1, count + 1):
            print(f"{{name}} {{i}} {{time.time():.6f}}", flush=True)
            time.sleep(every)
        return count

    def burst(self, name, count):
        for i in range(1, count + 1):
            print(f"{{name}} {{i}} {{time.time():.6f}}")
        return count

actors = [Printer.remote(), Printer.remote()]
ray.get([a.paced.remote(n, {paced}, 0.02) for a, n in zip(actors, ["A", "B"])])
time.sleep(1)
ray.get([a.burst.remote(n, {burst}) for a, n in zip(actors, ["A", "B"])])
time.sleep(2)
"""


class Arrivals:
    """Lines `NAME i t` per source, with the arrival time of the chunk that carried each line."""

    def __init__(self, v: Viewer, cell_id: str) -> None:
        self.lines: dict[str, list[tuple[int, float, float]]] = {}
        self._partial: dict[str, str] = {}
        v.sio.on("event", lambda d: (self._take(d, cell_id), v._on_event(d)))

    def _take(self, ev: dict[str, Any], cell_id: str) -> None:
        now = time.time()
        if ev.get("type") != "output" or ev.get("cell_id") != cell_id:
            return
        key = ev["source"]
        text = self._partial.pop(key, "") + ev["text"]
        *done, rest = text.split("\n")
        self._partial[key] = rest
        for line in done:
            parts = line.split()
            if len(parts) >= 3 and parts[-2].isdigit():
                self.lines.setdefault(parts[-3], []).append((int(parts[-2]), float(parts[-1]), now))


def measure(server: Any, source: str, paced: int, burst: int) -> dict[str, Any]:
    if source == "session":
        cell = f"--script\nstamp {paced} every 0.02 from A, B\nsleep 1\nstamp {burst} from A, B\nsleep 0.5\n"
        kind = "mlsql"
    else:
        cell, kind = RAY_CELL.format(paced=paced, burst=burst), "python"
    nb = server.notebook(cell, kind=kind)
    v = Viewer(server.url)
    v.command("join", notebook_id=nb.id)
    got = Arrivals(v, nb.cells[0].id)  # listening before the run starts: no line is missed
    ack = v.command("run_cell", notebook_id=nb.id, cell_id=nb.cells[0].id)
    run_id = ack["run_ids"][0]
    status = v.wait_status(run_id, "done", "error", "interrupted", timeout=900)
    time.sleep(0.5)
    v.close()
    if status["status"] != "done":
        errors = [e for e in v.events if e["type"] == "error"]
        raise SystemExit(f"{source}: the cell ended {status['status']}: {errors[-1:] or ''}")
    paced_lat = [(arr - sent) * 1000 for name in ("A", "B") for i, sent, arr in got.lines.get(name, [])[:paced]]
    burst_lines = {name: got.lines.get(name, [])[paced:] for name in ("A", "B")}
    complete = all([i for i, _, _ in burst_lines[n]] == list(range(1, burst + 1)) for n in ("A", "B"))
    firsts = [ls[0][1] for ls in burst_lines.values() if ls]
    lasts = [ls[-1][2] for ls in burst_lines.values() if ls]
    span = max(lasts) - min(firsts) if firsts and lasts else float("nan")
    return {"p50": statistics.median(paced_lat), "p95": sorted(paced_lat)[int(len(paced_lat) * 0.95) - 1],
            "count": len(paced_lat), "complete": complete,
            "received": sum(len(v) for v in burst_lines.values()), "rate": 2 * burst / span}


def ray_available() -> bool:
    try:
        from console.kernel.python_runtime import PythonRuntime# noqa: F401
    except ImportError:
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--paced", type=int, default=150, help="paced lines per source")
    parser.add_argument("--lines", type=int, default=10000, help="burst lines in all (two sources)")
    args = parser.parse_args()
    burst = args.lines // 2
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as data:
        from console.cluster.procs import free_port

        # A free Ray Client port: 10001 may belong to another cluster on a shared machine.
        live = LiveServer(data, RAY_CLIENT_PORT=free_port(), RAY_NUM_CPUS=2)
        try:
            results["session"] = measure(live, "session", args.paced, burst)
            if ray_available():
                results["ray"] = measure(live, "ray", args.paced, burst)
        finally:
            live.close()
    for name, r in results.items():
        print(f"[{name}] {r['count']} paced lines, burst {r['received']}/{2 * burst} lines, "
              f"in order per source: {r['complete']}")
    main_key = "ray" if "ray" in results else "session"
    r = results[main_key]
    where = "print in a Ray actor" if main_key == "ray" else "print in the kernel (no Ray: runtime missing)"
    print(f"measured from: {where} -> Socket.IO client")
    print(f"stream_latency_p50: {r['p50']:.0f} ms (target ≤150 ms; Ray's own forwarding ~50 ms)")
    print(f"stream_latency_p95: {r['p95']:.0f} ms (target ≤300 ms)")
    print(f"burst_throughput: {r['rate']:.0f} lines/s (10k-line burst, no target)")
    print(f"burst_lost_lines: {2 * burst - r['received']} lines (target 0)")
    if "ray" in results:
        s = results["session"]
        print(f"session_layer_latency_p50: {s['p50']:.0f} ms (our part alone; no target)")
        print(f"session_layer_latency_p95: {s['p95']:.0f} ms (our part alone; no target)")
    return 0 if all(x["complete"] for x in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
