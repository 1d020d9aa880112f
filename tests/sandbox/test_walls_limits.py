"""No session can starve the rest (issue 20, findings 5 and 6), tried as a member on a real server.

The walled server runs with CONSOLE_SESSION_MEMORY=1G and CONSOLE_SESSION_PROCESSES=256
(tests/sandbox/conftest.py). Each test fails on the code before issue 20: there a cell could take
2 GiB and start 600 processes, and one user could open any number of kernels. How fast a hog is
stopped and how /api/health answers meanwhile: bench/sandbox_start.py.
"""
from __future__ import annotations

import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from console.cluster import limits
from console.cluster.guard import BadPorts, check_ports
from console.cluster.head import start_head
from walled_support import Member, Walled, text_of

HOG = "--%python\nblob = b'x' * (2 << 30)\nprint('took', len(blob))\n"
STORM = """--%python
import subprocess
started = []
try:
    for _ in range(600):
        started.append(subprocess.Popen(['sleep', '30']))
finally:
    for p in started:  # before anything else: even print starts a thread in a cell
        p.kill()
        p.wait()
    print('started', len(started))
"""


def _alice_table(walled: Walled) -> tuple[Member, dict[str, Any]]:
    alice = walled.member("alice")
    nb = alice.notebook("select 41 as a as alice_t;", "select a + 1 as b from alice_t as alice_again;")
    (run,) = alice.run_in(nb, 0)
    assert run["status"] == "done", text_of(run)[-2000:]
    return alice, nb


def _health_while(walled: Walled, stop: threading.Event, seen: list[int]) -> None:
    while not stop.is_set():
        with urllib.request.urlopen(walled.served.url + "/api/health", timeout=30) as resp:
            seen.append(resp.status)
        time.sleep(0.05)


def test_a_memory_hog_is_stopped_naming_the_limit_and_the_rest_keeps_running(walled: Walled) -> None:
    alice, alice_nb = _alice_table(walled)
    mallory = walled.member()
    nb = mallory.notebook(HOG, "--%python\nprint('after', 6 * 7)\n")
    stop, health = threading.Event(), []  # type: ignore[var-annotated]
    poller = threading.Thread(target=_health_while, args=(walled, stop, health), daemon=True)
    poller.start()
    try:
        (run,) = mallory.run_in(nb, 0)
    finally:
        stop.set()
        poller.join(timeout=35)
    shown = text_of(run)
    assert run["status"] == "error", shown[-2000:]
    assert "CONSOLE_SESSION_MEMORY = 1 GiB" in shown and "memory limit" in shown, shown[-2000:]
    assert "took" not in shown
    assert health and set(health) == {200}, health  # the server answered all along
    # Her session goes on (a new worker), and alice's kernel still has her table.
    (after,) = mallory.run_in(nb, 1)
    assert after["status"] == "done" and "after 42" in text_of(after), text_of(after)[-2000:]
    (again,) = alice.run_in(alice_nb, 1)
    assert again["status"] == "done" and "42" in text_of(again), text_of(again)[-2000:]


def test_a_process_storm_is_stopped_naming_the_limit(walled: Walled) -> None:
    alice, alice_nb = _alice_table(walled)
    mallory = walled.member()
    nb = mallory.notebook(STORM, "--%python\nprint('after', 6 * 7)\n")
    (run,) = mallory.run_in(nb, 0)
    shown = text_of(run)
    assert run["status"] == "error", shown[-2000:]
    assert "CONSOLE_SESSION_PROCESSES = 256" in shown and "process limit" in shown, shown[-2000:]
    assert "started 600" not in shown
    (after,) = mallory.run_in(nb, 1)
    assert after["status"] == "done" and "after 42" in text_of(after), text_of(after)[-2000:]
    (again,) = alice.run_in(alice_nb, 1)
    assert again["status"] == "done" and "42" in text_of(again), text_of(again)[-2000:]


def test_a_session_gets_a_private_bounded_dev_shm(walled: Walled) -> None:
    cell = ("--%python\nimport os, json\nst = os.statvfs('/dev/shm')\n"
            "print('SHM', json.dumps({'size': st.f_blocks * st.f_frsize, 'names': sorted(os.listdir('/dev/shm'))}))\n")
    # mallory leaves a file in her /dev/shm; a second session of hers does not see it.
    first = walled.member().run(("python", "--%python\nopen('/dev/shm/mallory-was-here', 'w').write('x')\n"))
    assert first[0]["status"] == "done", text_of(first[0])[-2000:]
    (run,) = walled.member().run(("python", cell))
    assert run["status"] == "done", text_of(run)[-2000:]
    line = next(ln for e in run["events"] for ln in str(e.get("text", "")).splitlines() if ln.startswith("SHM "))
    import json

    seen = json.loads(line[4:])
    assert seen["size"] == 1 << 30, seen  # CONSOLE_SESSION_SHM's default, not the host's tmpfs
    assert "mallory-was-here" not in seen["names"], seen
    assert not Path("/dev/shm/mallory-was-here").exists()


def test_the_ninth_kernel_of_a_user_is_refused_naming_the_open_ones(tmp_path: Path) -> None:
    from console.server import create_app
    from console.server.auth import hash_password
    from tests.support.live_server import REAL_KERNEL, Served, _pythonpath
    from walled_support import PASSWORD

    app = create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "SINGLE_USER": False,
                      "SESSIONS_PER_USER": 2, "KERNEL_ENV": {"PYTHONPATH": _pythonpath()}}, kernel_module=REAL_KERNEL)
    store = app.extensions["store"]
    for name in ("carol", "dave"):
        store.create_user(name, hash_password(PASSWORD))
    served = Served(app)
    try:
        carol, dave = Member(served.url, "carol"), Member(served.url, "dave")
        open_nbs = []
        for i in range(2):
            nb = carol.notebook("select 1 as a as t;", name=f"carol-{i}")
            assert carol.run_in(nb, 0)[0]["status"] == "done"
            open_nbs.append(nb)
        names = [nb["name"] for nb in open_nbs]
        third = carol.notebook("select 1 as a as t;", name="carol-third")
        status, reply = carol.call("POST", f"/notebooks/{third['id']}/run", {"all": True})
        assert status == 429, reply
        assert "CONSOLE_SESSIONS_PER_USER = 2" in reply["error"] and all(n in reply["error"] for n in names), reply
        # Another user is not counted against carol, and a notebook she has open runs again.
        other = dave.notebook("select 1 as a as t;")
        assert dave.run_in(other, 0)[0]["status"] == "done"
        assert carol.run_in(open_nbs[0], 0)[0]["status"] == "done"
    finally:
        served.close()
        app.extensions["sessions"].shutdown()
        store.close()


def test_ports_the_head_cannot_start_with_are_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(BadPorts, match="CONSOLE_RAY_CLIENT_PORT.* 18832, inside the range"):
        check_ports(18832)
    with pytest.raises(BadPorts, match="both 20001"):
        check_ports(20001, {"the GCS port": 20001})
    # The head itself refuses before it starts anything (it never came up, with no reason).
    with pytest.raises(BadPorts, match="inside the range Ray's workers listen on"):
        start_head(tmp_path / "ray", client_port=18832, num_cpus=1, timeout=5)
    from console.server import create_app

    with pytest.raises(BadPorts, match="18832"):
        create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "RAY_CLIENT_PORT": 18832})


def test_limits_parse_and_refuse_bad_sizes() -> None:
    assert limits.parse_size("1G") == 1 << 30 and limits.parse_size("512MiB") == 512 << 20
    assert limits.parse_size("1073741824") == 1 << 30
    with pytest.raises(ValueError, match="expected a size"):
        limits.parse_size("lots")
    with pytest.raises(ValueError, match="at most 100%"):
        limits.parse_size_or_percent("170%")


def test_a_kernel_past_the_memory_limit_dies_with_the_limit_named(walled: Walled) -> None:
    """The kernel itself the biggest (an MLSQL cell): the server explains its death from the cgroup."""
    alice, alice_nb = _alice_table(walled)
    mallory = walled.member()
    nb = mallory.notebook("select length(repeat('x', 1500000000)) as n as big;", "select 6 * 7 as answer as t;")
    (run,) = mallory.run_in(nb, 0)
    shown = text_of(run)
    assert run["status"] == "error", shown[-2000:]
    assert "CONSOLE_SESSION_MEMORY = 1 GiB" in shown, shown[-2000:]
    (after,) = mallory.run_in(nb, 1)  # a new kernel for her next run
    assert after["status"] == "done" and "42" in text_of(after), text_of(after)[-2000:]
    (again,) = alice.run_in(alice_nb, 1)
    assert again["status"] == "done" and "42" in text_of(again), text_of(again)[-2000:]
