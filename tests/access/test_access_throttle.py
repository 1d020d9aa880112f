"""Login throttling against real servers in login mode: per address, and what a burst of guesses costs.

After 20 failed logins from one address within a minute its further attempts get 429 for 30 s,
whatever the names; a wrong old password on POST /api/me/password is a failed login; 60 parallel
logins with made-up names leave /api/health answering (production gunicorn server; how fast: bench/login_guesses.py).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from flask import Flask

from console.clock import MovableClock
from console.server import auth
from console.server.auth import THROTTLE_KEY, hash_password
from console.server.throttle import AddressThrottle, HashTimer
from findings_support import Client
from security_support import PASSWORD, Served
from tests.support.live_server import start_server


def _login(url: str, name: str, password: str) -> tuple[int, dict[str, object]]:
    r = Client(url).call("POST", "/api/login", {"username": name, "password": password})
    return r.status, r.json or {}


def test_twenty_failures_from_one_address_block_it_whatever_the_names(served: Served) -> None:
    for i in range(20):
        status, _ = _login(served.url, f"nobody-{i}", "wrong password")
        assert status == 401, i
    # The 21st attempt is refused, even with the right password of a real user.
    status, body = _login(served.url, "alice", PASSWORD)
    assert status == 429 and 25 <= int(body["retry_after"]) <= 30, body  # type: ignore[call-overload]
    assert "this address" in str(body["error"])


def test_the_block_ends_and_the_count_starts_afresh(mu_app: Flask, served: Served) -> None:
    clock = MovableClock()
    mu_app.extensions[THROTTLE_KEY] = AddressThrottle(limit=3, block=30.0, clock=clock.monotonic)
    assert [_login(served.url, "nobody", "wrong password")[0] for _ in range(3)] == [401, 401, 401]
    assert _login(served.url, "alice", PASSWORD)[0] == 429
    clock.advance(29.0)
    assert _login(served.url, "alice", PASSWORD)[0] == 429
    clock.advance(1.5)
    assert _login(served.url, "alice", PASSWORD)[0] == 200


def test_a_wrong_old_password_counts_towards_the_lockout(served: Served) -> None:
    alice = Client(served.url).login("alice")
    for _ in range(5):
        r = alice.call("POST", "/api/me/password", {"old_password": "a wrong guess", "new_password": "x" * 12})
        assert r.status == 403, r
    # Locked like five failed logins: the right old password is refused for now, and so is a login.
    r = alice.call("POST", "/api/me/password", {"old_password": PASSWORD, "new_password": "x" * 12})
    assert r.status == 429 and r.json["retry_after"] >= 29, r
    assert _login(served.url, "alice", PASSWORD)[0] == 429
    assert _login(served.url, "vera", PASSWORD)[0] == 200  # another name from the same address is not


def test_unknown_names_wait_as_long_as_real_checks_take(mu_app: Flask, served: Served,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # A timer of this test's own: it learns only from the checks below (earlier tests of this
    # process checked the cheap hashes of make_app's users) and records what it waits.
    checks: list[float] = []
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    timer = HashTimer(lambda: pytest.fail("a real check comes first"), sleep=wait)
    observe = timer.observe
    monkeypatch.setattr(timer, "observe", lambda seconds: (checks.append(seconds), observe(seconds)))
    monkeypatch.setattr(auth, "_HASH_TIME", timer)
    # alice's password at the product's cost (make_app's users have a cheaper hash)
    store = mu_app.extensions["store"]
    store.set_password(store.get_user_by_name("alice").id, hash_password(PASSWORD))
    assert _login(served.url, "alice", PASSWORD)[0] == 200
    assert [_login(served.url, "alice", f"wrong {i}")[0] for i in range(3)] == [401] * 3
    assert [_login(served.url, f"nobody-{i}", "wrong")[0] for i in range(3)] == [401] * 3
    # Each unknown name waited once, for the average of the real checks made (no hash of its own):
    # as long as a wrong password takes, whatever the machine's speed.
    assert len(checks) == 4 and len(waits) == 3, (checks, waits)
    assert all(min(checks) * 0.999 <= w <= max(checks) * 1.001 for w in waits), (checks, waits)


def test_sixty_parallel_guesses_leave_health_answering(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    server = start_server(data, {"CONSOLE_SINGLE_USER": "false"})
    try:
        health: list[int] = []
        statuses: list[int] = []
        done = threading.Event()

        def probe() -> None:
            while not done.is_set():
                health.append(Client(server.url).call("GET", "/api/health", timeout=60).status)
                time.sleep(0.05)

        def guess(i: int) -> None:
            statuses.append(_login(server.url, f"made-up-{i}", "guess")[0])

        prober = threading.Thread(target=probe)
        prober.start()
        time.sleep(0.2)
        guesses = [threading.Thread(target=guess, args=(i,)) for i in range(60)]
        for t in guesses:
            t.start()
        for t in guesses:
            t.join(timeout=120)
        done.set()
        prober.join(timeout=60)
        # Every probe answered while the guesses came; how fast is bench/login_guesses.py's figure.
        assert health and all(status == 200 for status in health), health
        assert sorted(set(statuses)) == [401, 429] and statuses.count(401) <= 20, statuses
    finally:
        server.stop()
