"""A hostile member's Python cell that writes to its own kernel's event pipe, and what to look at after.

The cell runs in a real worker whose parent is its kernel: it finds the kernel's event pipe from
the kernel's command line (`--event-fd N`) and opens `/proc/<ppid>/fd/N` for writing, as issue 21
describes. Every test drives it on a real server (tests/support/live_server.py, real kernels).
"""
from __future__ import annotations

import json
import time
from typing import Any

OPEN_PIPE = """
import json, os
_ppid = os.getppid()
_argv = open("/proc/%d/cmdline" % _ppid, "rb").read().split(b"\\0")
_pipe = os.open("/proc/%d/fd/%d" % (_ppid, int(_argv[_argv.index(b"--event-fd") + 1])), os.O_WRONLY)
def forge(*messages):
    for m in messages:
        os.write(_pipe, (m if isinstance(m, str) else json.dumps(m)).encode() + b"\\n")
"""


def forging_cell(body: str) -> tuple[str, str]:
    """A Python cell (kind, source) that defines forge(*messages) and then runs `body`."""
    return "python", "--%python\n" + OPEN_PIPE + body + "\nprint('FORGED')\n"


def wait_run(live: Any, run_id: str, timeout: float = 300.0) -> Any:
    """The run once it has ended, whatever way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = live.store.get_run(run_id)
        if run.status in ("done", "error", "interrupted", "cancelled"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end in {timeout:.0f} s")


def run_all(live: Any, nb: Any, user: Any) -> list[Any]:
    """Run every cell of nb as user (the store's user record) and return their ended runs."""
    ids = live.manager.run(user.id, nb.id, "all")
    return [wait_run(live, run_id) for run_id in ids]


def stored(live: Any, run_id: str) -> dict[str, Any]:
    """Everything the store keeps of a run, to compare before and after an attack."""
    run = live.store.get_run(run_id)
    return {"status": run.status, "error": json.dumps(run.error, sort_keys=True, default=str),
            "result": json.dumps(run.result, sort_keys=True, default=str),
            "outputs": [(o.seq, o.text, o.source, o.stream) for o in live.store.iter_outputs(run_id)],
            "metrics": [json.dumps(m.values, sort_keys=True) for m in live.store.metrics_for(run_id)],
            "log_file": live.store.log_file_of(run_id)}


def rss_kb(field: str = "VmRSS") -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def reset_peak() -> None:
    """Start VmHWM (the peak RSS) again from the current RSS (Linux: clear_refs 5)."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


LONG_LINE = """
block = b"x" * (1 << 20)
try:
    for _ in range(300):
        os.write(_pipe, block)
except OSError:
    pass
"""

UNKNOWN_ANSWERS = """
import uuid
line = b"".join(json.dumps({"type": "kernel_answer", "request_id": uuid.uuid4().hex,
                            "data": {"rows": [[1, 2, 3]] * 40}}).encode() + b"\\n" for _ in range(1000))
for _ in range(100):
    os.write(_pipe, line)
"""


def peak_growth_kb(live: Any, attack_body: str, user: str = "mallory") -> tuple[int, Any, Any]:
    """Peak RSS growth of this process (the server) while a forging cell runs, after a warm cell
    started the kernel and its worker: (KiB, the attack's run, the kernel session)."""
    member = live.store.ensure_user(user)
    nb = live.notebook(("python", "--%python\nprint('warm')\n"), forging_cell(attack_body), owner=user)
    (warm,) = [wait_run(live, r) for r in live.manager.run(member.id, nb.id, "cell", nb.cells[0].id)]
    assert warm.status == "done", warm.error
    before = rss_kb()
    reset_peak()
    (attack,) = [wait_run(live, r) for r in live.manager.run(member.id, nb.id, "cell", nb.cells[1].id)]
    return rss_kb("VmHWM") - before, attack, live.manager.session(member.id, nb.id)


def own_run_cell(run_file: Any, body: str) -> tuple[str, str]:
    """A forging cell that first waits for the test to write its own run id into run_file."""
    return forging_cell(f"""
import time
_deadline = time.time() + 60
while not os.path.exists({str(run_file)!r}) and time.time() < _deadline:
    time.sleep(0.05)
own = open({str(run_file)!r}).read().strip()
""" + body)
