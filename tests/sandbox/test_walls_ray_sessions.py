"""Each session's Ray work runs on a cluster of its own (issue 29 items 1-3): attacked from real cells.

alice keeps a secret in a named, detached actor of a namespace of her own, as Ray's docs show for
a long-lived service. mallory, a member of the same server with a Ray cell of her own, tries what
Ray allows any driver of a shared cluster: list every namespace's named actors, get alice's by
name, call it, kill it. On one shared head every step worked (the issue's finding 1). Here each
session's head is its own, so alice's actor is not there to find. Also checked from mallory's
side: no Ray token but her own in anything she can read, and a Ray task's /dev/shm that is
neither the host's nor unbounded (findings 2 and 3).
"""
from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

import pytest

from walled_support import Walled, text_of

pytestmark = [pytest.mark.ray, pytest.mark.sandbox]

VAULT = """--%python
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Vault:
    def __init__(self, secret):
        self.secret = secret

    def get(self):
        return self.secret

vault = Vault.options(name="alicevault", namespace="alicens", lifetime="detached").remote("{secret}")
print("KEPT", ray.get(vault.get.remote()) == "{secret}")
"""

PROBE = """--%python
import json, os
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
report = {{"named": sorted(a["name"] for a in ray.util.list_named_actors(all_namespaces=True))}}
try:
    h = ray.get_actor("alicevault", namespace="alicens")
    report["got"] = str(ray.get(h.get.remote(), timeout=20))
    ray.kill(h)
    report["killed"] = True
except Exception as exc:
    report["refused"] = type(exc).__name__
own = os.environ.get("RAY_AUTH_TOKEN", "")

@ray.remote
def look():
    tokens, readable = set(), 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{{pid}}/environ", "rb") as fh:
                env = fh.read().split(b"\\0")
        except OSError:
            continue
        readable += 1
        tokens |= {{e[len(b"RAY_AUTH_TOKEN="):].decode() for e in env if e.startswith(b"RAY_AUTH_TOKEN=")}}
    with open("/dev/shm/mallory-was-here", "w") as fh:
        fh.write("x")
    st = os.statvfs("/dev/shm")
    return {{"tokens": sorted(tokens), "readable": readable, "shm": sorted(os.listdir("/dev/shm")),
            "shm_bytes": st.f_blocks * st.f_frsize, "uid": os.getuid()}}

report["task"] = ray.get(look.remote())
report["own_token"] = own
print("PROBE " + json.dumps(report))
"""


def _line(run: dict[str, Any], mark: str) -> str:
    assert run["status"] == "done", text_of(run)[-3000:]
    for event in run.get("events", []):
        for line in str(event.get("text", "")).splitlines():
            if line.startswith(mark):
                return line[len(mark):]
    raise AssertionError(f"no {mark.strip()} line: {text_of(run)[-3000:]}")


def _kernel(walled: Walled, user: str, nb: dict[str, Any]) -> Any:
    who = walled.app.extensions["store"].get_user_by_name(user)
    session = walled.app.extensions["sessions"].get().session(who.id, nb["id"])
    assert session.kernel is not None and session.kernel.alive()
    return session.kernel


def test_a_member_cannot_list_call_or_kill_another_sessions_actors(walled: Walled) -> None:
    secret = secrets.token_hex(8)
    alice = walled.member("alice")
    nb = alice.notebook(("python", VAULT.format(secret=secret)))
    (run,) = alice.run_in(nb, 0)
    assert _line(run, "KEPT ").strip() == "True"
    alice_cluster = _kernel(walled, "alice", nb).cluster
    assert alice_cluster is not None and alice_cluster.info is not None, "alice's session has no cluster of its own"
    # A host /dev/shm entry a shared /dev/shm would show her.
    marker = Path("/dev/shm") / f"host-marker-{secrets.token_hex(4)}"
    marker.write_text("host")
    try:
        mallory = walled.member("mallory")
        mnb = mallory.notebook(("python", PROBE.format()))
        (probe,) = mallory.run_in(mnb, 0)
        report = json.loads(_line(probe, "PROBE "))
    finally:
        marker.unlink()
    mallory_cluster = _kernel(walled, "mallory", mnb).cluster
    assert mallory_cluster is not None and mallory_cluster.info is not None
    assert mallory_cluster.info.address != alice_cluster.info.address
    # Finding 1: nothing of alice's to list, get, call or kill.
    assert "alicevault" not in report["named"], report
    assert "got" not in report and "killed" not in report and report.get("refused") == "ValueError", report
    # Finding 2: the only Ray token mallory can read anywhere is her own session's.
    own = report["own_token"]
    assert own and own != alice_cluster.info.auth_token
    assert report["task"]["tokens"] in ([], [own]), report["task"]["tokens"]
    assert alice_cluster.info.auth_token not in json.dumps(report)
    # Finding 3: a Ray task's /dev/shm is private (no host entry, no other server's folders) and bounded.
    shm = report["task"]["shm"]
    assert marker.name not in shm and not any(n.startswith("console-") and n != _handoff_parent(walled) for n in shm)
    assert report["task"]["shm_bytes"] <= 2 << 30, report["task"]
    assert not (Path("/dev/shm") / "mallory-was-here").exists()
    # Her tasks run as her session's uid, not the server's and not alice's.
    assert report["task"]["uid"] not in (os.getuid(), alice_cluster.wall.lease.uid)
    # alice's actor lived through it all.
    again = alice.notebook(("python", "--%python\nimport ray\nfrom pyjava.api.mlsql import RayContext\n"
                                      "RayContext.connect(globals(), '127.0.0.1:10001')\n"
                                      "print('STILL', ray.get(ray.get_actor('alicevault', namespace='alicens')"
                                      ".get.remote()))\n"))
    # A second notebook of alice's is a session of its own too: it does not see the first one's actor.
    (other,) = alice.run_in(again, 0)
    assert other["status"] == "error" and "alicevault" in text_of(other), text_of(other)[-2000:]


def _handoff_parent(walled: Walled) -> str:
    from console.cluster.walls import handoff_root

    return handoff_root(walled.app.extensions["config"]).name


def test_a_sessions_cluster_ends_with_its_kernel(walled: Walled) -> None:
    alice = walled.member("alice")
    nb = alice.notebook(("python", "--%python\nimport ray\nfrom pyjava.api.mlsql import RayContext\n"
                                   "RayContext.connect(globals(), '127.0.0.1:10001')\n"
                                   "print('NODES', len(ray.nodes()))\n"))
    (run,) = alice.run_in(nb, 0)
    assert _line(run, "NODES ").strip() == "1"
    kernel = _kernel(walled, "alice", nb)
    info, temp_dir = kernel.cluster.info, kernel.cluster.root
    assert info is not None and info.pid and kernel.cluster.temp_dir.is_dir()
    # Ray makes its temp dir 0777; the folder around it is the session's alone.
    assert temp_dir.stat().st_uid == kernel.cluster.wall.lease.uid and temp_dir.stat().st_mode & 0o077 == 0
    status, _ = alice.call("POST", f"/notebooks/{nb['id']}/restart", {})
    assert status in (200, 202, 204), status
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (_alive(info.pid) or temp_dir.exists()):
        time.sleep(0.2)
    assert not _alive(info.pid), "the session's Ray head outlived its kernel"
    assert not temp_dir.exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def test_a_symlink_in_the_sessions_ray_folder_aims_no_server_write(walled: Walled) -> None:
    """The kernel writes its Ray temp dir; the server must write and read nothing there as root.

    The head's start log was once there: a link planted before the first Ray cell would have made
    the server append Ray's log to the link's target (the cookie key here) and read it back.
    """
    key = walled.key_path
    before = (key.read_bytes(), key.stat().st_mtime_ns)
    alice = walled.member("alice")
    plant = ("python", "--%python\nimport glob, os\nfor r in glob.glob('/tmp/mlsr-*/r'):\n"
                       # no word "ray" in this cell: the server would start the head at once (warm)
                       f"    for name in ('ra' + 'y-start.log', 'start.log', 'ra' + 'y.log'):\n"
                       f"        os.symlink({str(key)!r}, os.path.join(r, name))\n"
                       "print('PLANTED', len(glob.glob('/tmp/mlsr-*/r')))\n")
    nb = alice.notebook(plant, ("python", "--%python\nimport ray\nfrom pyjava.api.mlsql import RayContext\n"
                                          "RayContext.connect(globals(), '127.0.0.1:10001')\nprint('UP')\n"))
    (first,) = alice.run_in(nb, 0)
    assert _line(first, "PLANTED ").strip() == "1"
    (second,) = alice.run_in(nb, 1)
    assert second["status"] == "done", text_of(second)[-2000:]
    assert (key.read_bytes(), key.stat().st_mtime_ns) == before
    assert before[0].decode(errors="replace").strip() not in text_of(second)


def test_a_head_killed_again_and_again_is_not_restarted_for_ever(walled: Walled,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A session may kill its own head (its tasks run as its uid) and ask for another, ~2 s of the
    machine's CPU each time: past MAX_RESTARTS in the window, the kernel must restart instead."""
    from console.cluster import session_head
    from console.cluster.procs import stop_process_group

    monkeypatch.setattr(session_head, "MAX_RESTARTS", 1)
    alice = walled.member("alice")
    nb = alice.notebook(("python", "--%python\nimport ray\nfrom pyjava.api.mlsql import RayContext\n"
                                   "RayContext.connect(globals(), '127.0.0.1:10001')\nprint('UP')\n"))
    (run,) = alice.run_in(nb, 0)
    assert run["status"] == "done", text_of(run)[-2000:]
    cluster = _kernel(walled, "alice", nb).cluster

    def kill() -> None:
        info = cluster.info
        assert info is not None and info.pid
        stop_process_group(info.pid, grace=0.5)
        assert not cluster.running()

    kill()
    assert cluster.ensure().pid  # the first death: a new head, as the kernel asks again
    kill()
    with pytest.raises(RuntimeError, match="restart the kernel"):
        cluster.ensure()
    later = cluster.clock() + session_head.RESTART_WINDOW_S + 1
    cluster.clock = lambda: later  # the window passed: one more is allowed
    assert cluster.ensure().pid and cluster.running()


def test_an_actor_past_the_sessions_memory_is_stopped_naming_the_sessions_limit(walled: Walled) -> None:
    """CONSOLE_SESSION_MEMORY (1 GiB here) covers the session's cluster too (cgroup v1): an actor
    that takes more is stopped, the cell says which limit, and the session goes on."""
    from console.cluster.limits import CGROUP_ROOT

    if (CGROUP_ROOT / "cgroup.controllers").exists():
        pytest.skip("cgroup v2: a session's head has a CONSOLE_RAY_MEMORY group of its own")
    mallory = walled.member()
    nb = mallory.notebook(("python", "--%python\nimport ray\nfrom pyjava.api.mlsql import RayContext\n"
                                     "RayContext.connect(globals(), '127.0.0.1:10001')\n"
                                     "@ray.remote(max_retries=0)\ndef hog():\n"
                                     "    chunks = []\n"
                                     "    for _ in range(64):\n"
                                     "        chunks.append(bytearray(64 << 20))  # touched: resident\n"
                                     "    return len(chunks)\n"
                                     "print('GOT', ray.get(hog.remote()))\n"),
                          ("python", "--%python\nimport ray\nfrom pyjava.api.mlsql import RayContext\n"
                                     "RayContext.connect(globals(), '127.0.0.1:10001')\n"
                                     "print('STILL', ray.get(ray.remote(lambda: 41 + 1).remote()))\n"))
    (hogged,) = mallory.run_in(nb, 0)
    shown = text_of(hogged)
    assert hogged["status"] == "error" and "GOT 64" not in shown, shown[-2000:]
    assert "CONSOLE_SESSION_MEMORY = 1 GiB" in shown, shown[-2000:]
    (after,) = mallory.run_in(nb, 1)
    assert _line(after, "STILL ").strip() == "42", text_of(after)[-2000:]
