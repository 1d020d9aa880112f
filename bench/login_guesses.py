"""/api/health while 60 logins with made-up names arrive at once, against the same server at rest.

A production server (`start_server`: gunicorn, login mode). Unknown names do not hash: they wait
as long as a real check takes, and after 20 failures the address gets 429 (server/throttle.py), so
a burst of guesses should cost the other requests little. The figure is the worst health round
trip during the burst over the worst at rest, measured side by side in one run.

    python bench/login_guesses.py [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.live_server import start_server  # noqa: E402 - needs the sys.path line above

GUESSES = 60
TARGET_S = 1.0


def http_call(url: str, method: str, path: str, body: Any = None, timeout: float = 60) -> int:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def probes(url: str, until: threading.Event) -> list[float]:
    took: list[float] = []
    while not until.is_set():
        began = time.perf_counter()
        status = http_call(url, "GET", "/api/health")
        assert status == 200, status
        took.append(time.perf_counter() - began)
        time.sleep(0.05)
    return took


def burst(url: str) -> list[float]:
    """Health round trips while GUESSES logins with made-up names run in parallel."""
    done = threading.Event()
    took: list[float] = []
    prober = threading.Thread(target=lambda: took.extend(probes(url, done)))
    prober.start()
    time.sleep(0.2)
    guesses = [threading.Thread(target=http_call, args=(url, "POST", "/api/login"),
                                kwargs={"body": {"username": f"made-up-{i}-{time.time()}", "password": "guess"}})
               for i in range(GUESSES)]
    for t in guesses:
        t.start()
    for t in guesses:
        t.join()
    done.set()
    prober.join()
    return took


def at_rest(url: str, seconds: float) -> list[float]:
    done = threading.Event()
    threading.Timer(seconds, done.set).start()
    return probes(url, done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    worst_burst, worst_rest, p50 = [], [], []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:  # a fresh server: a fresh throttle each round
            data = Path(tmp) / "data"
            data.mkdir()
            server = start_server(data, {"CONSOLE_SINGLE_USER": "false"})
            try:
                rest = at_rest(server.url, 2.0)
                during = burst(server.url)
            finally:
                server.stop()
        worst_rest.append(max(rest))
        worst_burst.append(max(during))
        p50.append(statistics.median(during))
        print(f"round: at rest worst {max(rest) * 1000:.0f} ms; during {GUESSES} guesses worst "
              f"{max(during) * 1000:.0f} ms, p50 {statistics.median(during) * 1000:.0f} ms ({len(during)} probes)")
    print(f"login_guesses_health_worst: {statistics.median(worst_burst):.3f} s (target < {TARGET_S})")
    print(f"login_guesses_health_p50: {statistics.median(p50) * 1000:.0f} ms (target: at rest's)")
    print(f"login_guesses_health_worst_vs_rest: {statistics.median(worst_burst) / statistics.median(worst_rest):.1f} x "
          f"(target: reported)")


if __name__ == "__main__":
    main()
