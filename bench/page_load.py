"""Cold load of the notebook page: 50 cells and 10,000 lines of stored output, in Chromium.

One cell holds a 10,000-row result (its first RESULT_ROWS rows stored, as a kernel stores them)
shown as a bar chart (the cell's saved view), another a 10,000-row result as a table.

The notebook and its runs are written straight through the store API (no kernel needed), then
`mlsql-console serve` serves it and a fresh Chromium context opens it several times (no cache).
Time to interactive = navigation start -> the page's `console-ready` mark, set once the cells,
their editors and all stored output are drawn and key handling is bound.

    python bench/page_load.py [--cells 50] [--lines 10000] [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from console.store import Store  # noqa: E402 - needs the sys.path line above

TARGET_MS = 1500
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def seed(data_dir: Path, cells: int, lines: int) -> str:
    (data_dir / "server").mkdir(mode=0o700, parents=True, exist_ok=True)  # the server's private folder
    store = Store(f"sqlite:///{data_dir / 'server' / 'console.db'}")
    sources = []
    for i in range(cells):
        if i % 5 == 4:
            source = f"--%python\n--%input=t{i}\nimport time\nfor e in range(3):\n    print('epoch', e)\n"
            sources.append({"kind": "python", "source": source})
        elif i % 10 == 0:
            sources.append({"kind": "markdown", "source": f"## Step {i}\n\nSome *notes* about this part."})
        else:
            source = f"load parquet.`/data/part{i}` as p{i};\nselect a, b, c from p{i} where a > {i} as t{i};"
            sources.append({"kind": "mlsql", "source": source})
    # A saved chart: drawn from the stored rows while the page loads (no kernel keeps the result here).
    sources[1]["view"] = {"mode": "chart", "chart": {"type": "bar", "x": "b", "y": ["a", "c"], "agg": "sum",
                                                     "group": None}}
    nb = store.create_notebook("page load bench", "/", cells=sources)
    per_cell = lines // cells
    for c in nb.cells:
        run = store.create_run(nb.id, c.id, c.source, status="running")
        chunks, seq = [], 0
        for start in range(0, per_cell, 50):
            seq += 1
            text = "".join(f"{c.id} step {n}: loss=0.{n:04d} accuracy=0.9{n % 10}\n"
                           for n in range(start, min(per_cell, start + 50)))
            chunks.append({"seq": seq, "text": text, "source": "driver" if seq % 2 else "Worker pid=42",
                           "stream": "stdout"})
        store.append_output(run.id, chunks)
        columns = [{"name": "a", "type": "int64"}, {"name": "b", "type": "string"}]
        rows: list[list[object]] = [[r, f"row {r}"] for r in range(20)]
        total = 1000
        if c.position in (1, 2):  # 10,000 rows: the first 100 are stored with the run
            columns = columns + [{"name": "c", "type": "double"}]
            rows, total = [[r, f"group {r % 12}", r * 0.5] for r in range(100)], 10_000
        result = {"type": "result", "name": f"t_{c.id}", "columns": columns,
                  "rows": rows, "total_rows": total, "notebook_id": nb.id, "cell_id": c.id, "run_id": run.id}
        store.finish_run(run.id, "done", result=result)
    store.close()
    return nb.id


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONSOLE_")}
    env["CONSOLE_SINGLE_USER"] = "true"  # loopback only: no login page in the way
    log = open(data_dir.parent / "server.log", "wb")  # left open: it lives as long as the server
    command = [sys.executable, "-m", "console", "serve", "--port", str(port), "--data-dir", str(data_dir)]
    proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/api/health", timeout=2).read()
            return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start:\n" + (data_dir.parent / "server.log").read_text()[-3000:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=50)
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if not (REPO / "console/server/static/dist/main.js").exists():
        subprocess.run(["npm", "run", "--silent", "build"], cwd=REPO / "frontend", check=True)

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="page-load-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        nb_id = seed(data_dir, args.cells, args.lines)
        proc, url = serve(data_dir)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                ready, readies, wall, fetched, phases = [], [], [], [], []
                for i in range(args.repeats + 1):
                    ctx = browser.new_context(viewport={"width": 1280, "height": 900})  # cold: no cache
                    page = ctx.new_page()
                    t0 = time.perf_counter()
                    page.goto(f"{url}/notebooks/{nb_id}")
                    page.wait_for_selector("#app[data-ready='1']", state="attached", timeout=60000)
                    elapsed = (time.perf_counter() - t0) * 1000
                    page.wait_for_function("() => performance.getEntriesByName('console-painted').length > 0")
                    # Interactive = ready and the first frame after it laid out and painted.
                    mark = page.evaluate("performance.getEntriesByName('console-painted')[0].startTime")
                    marks_ready = page.evaluate("performance.getEntriesByName('console-ready')[0].startTime")
                    lines = page.evaluate("document.querySelectorAll('.log-lines .line').length")
                    # The saved chart is drawn (after ready: its rows are asked of a kernel first).
                    # A function, not an expression: Playwright evals an expression, which the CSP refuses.
                    page.wait_for_function("() => (document.querySelector('[data-role=result-chart]') || "
                                           "{dataset: {}}).dataset.points === '12'", timeout=20000)
                    api_ms = page.evaluate("""Math.max(...performance.getEntriesByType('resource')
                        .filter(e => e.name.includes('/api/notebooks/')).map(e => e.responseEnd))""")
                    marks = page.evaluate("""Object.fromEntries(['console-fetched', 'console-cells', 'console-drawn']
                        .map(n => [n, Math.round(performance.getEntriesByName(n)[0].startTime)]))""")
                    if i == 0:
                        print(f"warm-up (server first request): {mark:.0f} ms, {lines} log lines in the page")
                    else:
                        ready.append(mark)
                        readies.append(marks_ready)
                        wall.append(elapsed)
                        fetched.append(api_ms)
                        phases.append(marks)
                    ctx.close()
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)

    print(f"cells={args.cells} output_lines={args.lines} repeats={args.repeats}")
    print(f"API responses done at (median): {statistics.median(fetched):.0f} ms")
    for name in ("console-fetched", "console-cells", "console-drawn"):
        print(f"  {name}: median {statistics.median(p[name] for p in phases):.0f} ms")
    print(f"  console-ready (all drawn, keys bound): median {statistics.median(readies):.0f} ms")
    print(f"time to interactive (ready + first frame laid out and painted): median {statistics.median(ready):.0f} ms, "
          f"max {max(ready):.0f} ms (goto -> ready seen by the test: median {statistics.median(wall):.0f} ms)")
    print(f"page_load_{args.cells}cells_{args.lines // 1000}k_lines: {statistics.median(ready):.0f} ms "
          f"(target <= {TARGET_MS})")


if __name__ == "__main__":
    main()
