"""Sockets against the production server: /api/health while 500 logged-in clients watch a streaming
cell, and while anonymous websockets try to hold the server.

The server is `mlsql-console serve`'s gunicorn server in a child process (tests/support's
start_server), in login mode on 127.0.0.1, with the scripted kernel (tests/support). Users and
their login sessions are written into its store (no 500 password hashes); each client is a real
python-socketio client over websocket with the session cookie and the CSRF token, like the page.
Clients run in several child processes (one Python process cannot drive 500 clients' threads
quickly on 2 cores).

Phases:
1. anonymous: --anon raw websocket upgrades without a cookie, held open; how many the server
   refused, then /api/health p95 while the accepted ones stay open (on the old code each held
   one of 64 threads and health timed out);
2. load: --clients logged-in clients join one notebook; a cell streams lines (--lines every
   --every s); /api/health is timed every 50 ms while it streams; each client counts the lines
   it received.

    python bench/sockets_load.py [--clients 500] [--procs 4] [--anon 80] [--threads N]
"""
from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests' harness: tests/support

USERS = 50  # the clients' sessions are spread over this many viewer accounts


def health_ms(port: int, timeout: float = 5.0) -> float:
    """One GET /api/health on a fresh connection; its time in ms (timeout*1000 when it timed out)."""
    start = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", "/api/health")
        resp = conn.getresponse()
        resp.read()
        conn.close()
        if resp.status != 200:
            return timeout * 1000
    except OSError:
        return timeout * 1000
    return (time.perf_counter() - start) * 1000


def cpu_seconds(root: int) -> float:
    """CPU time (user + system) of process `root` and its descendants, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    tree, frontier = {root}, [root]
    while frontier:
        kids = [pid for pid, ppid in parents.items() if ppid in frontier and pid not in tree]
        tree.update(kids)
        frontier = kids
    return sum(times.get(pid, 0.0) for pid in tree)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def sample_health(port: int, seconds: float, every: float = 0.05) -> list[float]:
    samples: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        samples.append(health_ms(port))
        time.sleep(every)
    return samples


# --- the clients' child process -------------------------------------------------------------

def client_main(spec_path: str) -> int:
    """Connect the sessions in the spec, join the notebook, print `joined N`, and on `stop` print counts."""
    import socketio

    spec = json.loads(Path(spec_path).read_text())
    counts: list[int] = []
    clients: list[Any] = []
    lock = threading.Lock()
    failed = 0

    def counter(i: int) -> Any:
        def on_event(ev: dict[str, Any]) -> None:
            if ev.get("type") == "output":
                with lock:
                    counts[i] += ev.get("text", "").count("\n")
        return on_event

    for i, (cookie, csrf) in enumerate(spec["sessions"]):
        counts.append(0)
        sio = socketio.Client(reconnection=False)
        sio.on("event", counter(i))
        try:
            sio.connect(spec["url"], transports=["websocket"], headers={"Cookie": cookie}, auth={"csrf": csrf},
                        wait_timeout=30)
            ack = sio.call("command", {"type": "join", "notebook_id": spec["notebook_id"]}, timeout=60)
            if not ack.get("ok"):
                raise RuntimeError(ack)
            clients.append(sio)
        except Exception as exc:  # counted, reported by the parent
            failed += 1
            print(f"client {i} failed: {exc}", file=sys.stderr, flush=True)
    print(f"joined {len(clients)} {failed}", flush=True)
    sys.stdin.readline()  # "stop"
    with lock:
        print("counts " + json.dumps(counts), flush=True)
    for sio in clients:
        try:
            sio.disconnect()
        except Exception:
            pass
    return 0


# --- the parent ------------------------------------------------------------------------------

def open_store(server: Any) -> Any:
    """The server's own store, opened beside it (where its settings put the database)."""
    from console.config import load_config
    from console.store import Store

    return Store(load_config({"DATA_DIR": str(server.data_dir)}).database_url, run_migrations=False)


def seed(server: Any, clients: int, source: str) -> tuple[str, list[tuple[str, str]], tuple[str, str]]:
    """A notebook of one streaming cell, viewer accounts with `clients` login sessions, the owner's session."""
    from console.server.auth import CSRF_COOKIE, SESSION_COOKIE  # the cookies' names, not a copy

    store = open_store(server)
    expires = datetime.now(timezone.utc) + timedelta(days=1)

    def session(user_id: int) -> tuple[str, str]:
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        # The row's id is the token's SHA-256 (console/server/auth.py); the cookie holds the token.
        store.create_login_session(hashlib.sha256(token.encode()).hexdigest(), user_id, csrf, expires, "127.0.0.1")
        return f"{SESSION_COOKIE}={token}; {CSRF_COOKIE}={csrf}", csrf

    owner = store.create_user("owner", None)
    nb = store.create_notebook("load", owner_id=owner.id, cells=[{"kind": "mlsql", "source": source}])
    viewers = [store.create_user(f"viewer{i}", None) for i in range(USERS)]
    for v in viewers:
        store.set_share(v.id, "viewer", notebook_id=nb.id)
    sessions = [session(viewers[i % USERS].id) for i in range(clients)]
    owner_session = session(owner.id)
    store.close()
    return nb.id, sessions, owner_session


def anonymous_phase(server: Any, port: int, count: int) -> dict[str, Any]:
    import websocket

    held: list[Any] = []
    refused: dict[str, int] = {}
    url = f"ws://127.0.0.1:{port}/socket.io/?EIO=4&transport=websocket"

    def attempt() -> None:
        try:
            ws = websocket.create_connection(url, timeout=10)
            ws.settimeout(None)
            held.append(ws)
        except websocket.WebSocketBadStatusException as exc:
            refused[str(exc.status_code)] = refused.get(str(exc.status_code), 0) + 1
        except Exception as exc:
            refused[type(exc).__name__] = refused.get(type(exc).__name__, 0) + 1

    threads = [threading.Thread(target=attempt) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    samples = sample_health(port, 3.0)
    for ws in held:
        ws.close()
    return {"held": len(held), "refused": refused, "p95": p95(samples), "max": max(samples)}


def load_phase(server: Any, port: int, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    import socketio

    source = f"--script\nstamp {args.lines} every {args.every} from A\n"
    nb_id, sessions, (owner_cookie, owner_csrf) = seed(server, args.clients, source)
    per = (len(sessions) + args.procs - 1) // args.procs
    procs = []
    start = time.monotonic()
    for k in range(args.procs):
        spec = work / f"clients{k}.json"
        part = sessions[k * per:(k + 1) * per]
        spec.write_text(json.dumps({"url": server.url, "notebook_id": nb_id, "sessions": part}))
        procs.append(subprocess.Popen([sys.executable, __file__, "--client", str(spec)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, cwd=ROOT))
    joined = failed = 0
    for p in procs:
        assert p.stdout is not None
        line = p.stdout.readline().split()
        if not line:
            raise SystemExit(f"a client process ended early (exit {p.wait()})")
        joined, failed = joined + int(line[1]), failed + int(line[2])
    join_s = time.monotonic() - start
    idle = sample_health(port, 3.0)

    owner = socketio.Client(reconnection=False)
    owner.connect(server.url, transports=["websocket"], headers={"Cookie": owner_cookie}, auth={"csrf": owner_csrf},
                  wait_timeout=30)
    store = open_store(server)
    cell = store.get_notebook(nb_id).cells[0]
    store.close()
    ack = owner.call("command", {"type": "run_cell", "notebook_id": nb_id, "cell_id": cell.id}, timeout=60)
    if not ack.get("ok"):
        raise SystemExit(f"run refused: {ack}")
    window = args.lines * args.every * 0.9
    server_cpu, clients_cpu = cpu_seconds(server.proc.pid), sum(cpu_seconds(p.pid) for p in procs)
    streaming = sample_health(port, window)
    server_cpu = (cpu_seconds(server.proc.pid) - server_cpu) / window
    clients_cpu = (sum(cpu_seconds(p.pid) for p in procs) - clients_cpu) / window
    time.sleep(args.lines * args.every * 0.1 + 3)  # the rest of the stream, and the last batch
    counts: list[int] = []
    for p in procs:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write("stop\n")
        p.stdin.flush()
        line = p.stdout.readline()
        counts += json.loads(line.split(" ", 1)[1]) if line.startswith("counts ") else []
    for p in procs:
        p.wait(timeout=120)
    owner.disconnect()
    return {"joined": joined, "failed": failed, "join_s": join_s, "idle_p95": p95(idle),
            "p95": p95(streaming), "p50": sorted(streaming)[len(streaming) // 2], "max": max(streaming),
            "samples": len(streaming), "server_cores": server_cpu, "clients_cores": clients_cpu,
            "complete": sum(1 for c in counts if c >= args.lines),
            "min_lines": min(counts) if counts else 0}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--procs", type=int, default=4, help="client processes")
    parser.add_argument("--anon", type=int, default=80, help="anonymous websocket attempts")
    parser.add_argument("--threads", type=int, default=None, help="server threads (default: serve's default)")
    parser.add_argument("--lines", type=int, default=300, help="lines the cell streams")
    parser.add_argument("--every", type=float, default=0.05, help="seconds between lines")
    parser.add_argument("--client", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        return client_main(args.client)

    from console.server.server import DEFAULT_THREADS
    from tests.support.live_server import start_server

    threads = args.threads or DEFAULT_THREADS
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = start_server(work / "data", {"CONSOLE_SINGLE_USER": "false"}, threads=threads)
        port = int(server.url.rsplit(":", 1)[1])
        try:
            anon = anonymous_phase(server, port, args.anon)
            load = load_phase(server, port, args, work)
        finally:
            server.stop()
    refused = ", ".join(f"{n}×{k}" for k, n in sorted(anon["refused"].items())) or "none"
    print(f"server: gunicorn gthread, {threads} threads, login mode, {os.cpu_count()} cores shared with the clients")
    print(f"anonymous websockets: {args.anon} tried, {anon['held']} held open, refused: {refused}")
    print(f"clients: {load['joined']} joined ({load['failed']} failed) in {load['join_s']:.1f} s; "
          f"{load['complete']} received all {args.lines} lines (fewest {load['min_lines']})")
    print(f"health while joined, idle: p95 {load['idle_p95']:.0f} ms")
    print(f"health while streaming: p50 {load['p50']:.0f} ms, max {load['max']:.0f} ms, {load['samples']} samples")
    print(f"CPU while streaming: server {load['server_cores']:.2f} cores, clients {load['clients_cores']:.2f} cores; "
          f"machine load average {os.getloadavg()[0]:.1f}")
    print(f"anon_ws_refused: {sum(anon['refused'].values())} of {args.anon}")
    print(f"anon_ws_health_p95_ms: {anon['p95']:.0f} ms (target ≤200, {anon['held']} anonymous websockets open)")
    print(f"health_p95_ms: {load['p95']:.0f} ms (target ≤200, {load['joined']} joined clients, cell streaming)")
    ok = load["p95"] <= 200 and anon["p95"] <= 200 and load["joined"] == args.clients
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
