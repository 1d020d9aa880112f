"""A kernel is untrusted: what a cell writes on its own kernel's event pipe (issue 21 §1-3).

Each test is a hostile member's real Python cell, on a real server with real kernels, writing
to `/proc/<ppid>/fd/<event fd>` (forge_support.py). On the
code before console/wire/ the server believed those lines: it stored output and metrics of any
JSON type in another member's run, built log paths from the ids in them, kept every unknown
answer and grew with a line that never ended.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_support import LONG_LINE, UNKNOWN_ANSWERS, forging_cell, peak_growth_kb, run_all, stored
from tests.support.clients import http
from tests.support.live_server import REAL_KERNEL, LiveServer

MB = 1024


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Without the sandbox: under it (issue 20) a kernel runs as a uid whose /proc/<pid>/fd its
    # cells cannot open, and these tests are about what the server does with what it reads.
    # The last test tries the same from inside the sandbox.
    root = tmp_path_factory.mktemp("forged")
    server = LiveServer(str(root / "data"), kernel_module=REAL_KERNEL, SANDBOX="off")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def victim(live: LiveServer) -> dict[str, Any]:
    """bob's finished run: output (so a log file), metrics-free, a result: what mallory aims at."""
    bob = live.store.ensure_user("bob")
    nb = live.notebook(("python", "--%python\nprint('bob was here')\n"), owner="bob")
    (run,) = run_all(live, nb, bob)
    assert run.status == "done", run.error
    log_file = live.store.log_file_of(run.id)
    assert log_file, "bob's run has a log file"
    data_dir = Path(live.app.extensions["config"].data_dir)
    return {"nb": nb.id, "cell": nb.cells[0].id, "run": run.id, "log": data_dir / log_file}


def _mallory_runs(live: LiveServer, *cells: tuple[str, str]) -> tuple[Any, list[Any]]:
    mallory = live.store.ensure_user("mallory")
    nb = live.notebook(*cells, owner="mallory")
    return nb, run_all(live, nb, mallory)


def _kernel_of(live: LiveServer, nb: Any) -> Any:
    mallory = live.store.ensure_user("mallory")
    return live.manager.session(mallory.id, nb.id)


def test_events_for_another_members_run_are_dropped_and_a_kernel_breaking_the_protocol_is_stopped(
        live: LiveServer, victim: dict[str, Any]) -> None:
    before, log_before = stored(live, victim["run"]), victim["log"].read_bytes()
    ids = {"notebook_id": victim["nb"], "cell_id": victim["cell"], "run_id": victim["run"]}
    run = victim["run"]
    body = f"""
forge({{"type": "run_output", "run_id": "{run}", "text": "INJECTED\\n"}},
      {{"type": "run_metrics", "run_id": "{run}", "values": {{"loss": 1.0}}}},
      {{"type": "run_result", "run_id": "{run}", "name": "t", "columns": [], "rows": [], "total_rows": 0}},
      {{"type": "run_error", "run_id": "{run}", "kind": "python", "message": "INJECTED"}},
      {{"type": "run_ended", "run_id": "{run}", "status": "error"}})
forge(dict({json.dumps(ids)}, type="output", text="INJECTED\\n"),
      dict({json.dumps(ids)}, type="metrics", values={{"loss": "anything"}}))
"""
    nb, (attack,) = _mallory_runs(live, forging_cell(body))
    assert stored(live, victim["run"]) == before
    assert victim["log"].read_bytes() == log_before
    # The well-typed lines about bob's run were dropped; the old-style line broke the protocol.
    session = _kernel_of(live, nb)
    assert session.status == "dead" and "broke the kernel protocol" in session.reason, session.reason
    assert "unknown message type 'output'" in session.reason, session.reason
    assert attack.status == "error" and "broke the kernel protocol" in attack.error["message"], attack.error


def test_dot_dot_ids_write_nothing_outside_the_data_dir_and_clearing_removes_only_ones_own_logs(
        live: LiveServer, victim: dict[str, Any]) -> None:
    data_dir = Path(live.app.extensions["config"].data_dir)
    outside = data_dir.parent / "outside"
    log_before = victim["log"].read_bytes()
    body = """
forge({"type": "run_output", "run_id": "../../../outside/x", "text": "x\\n"},
      {"type": "output", "text": "x\\n", "notebook_id": "../../../outside/x", "cell_id": "c", "run_id": "r1"})
"""
    nb, (attack,) = _mallory_runs(live, forging_cell(body))
    assert not outside.exists()
    assert attack.status == "error"
    status, body_ = http(live, "POST", f"/api/notebooks/{nb.id}/outputs/clear", {"all": True}, user="mallory")
    assert status == 200, body_
    assert victim["log"].read_bytes() == log_before
    logs = data_dir / "server" / "logs"
    assert sorted(p.name for p in logs.iterdir()) == sorted({victim["nb"], *[p.name for p in logs.iterdir()]})
    assert all(".." not in str(p) for p in logs.rglob("*"))


def test_metric_values_must_be_finite_numbers(live: LiveServer) -> None:
    body = """
forge('{"type": "run_metrics", "run_id": "r", "values": {"loss": NaN}}')
"""
    nb, (attack,) = _mallory_runs(live, forging_cell(body))
    session = _kernel_of(live, nb)
    assert session.status == "dead" and "finite number" in session.reason, session.reason
    assert attack.status == "error"


def test_the_kernels_own_output_is_stamped_with_the_servers_ids(live: LiveServer) -> None:
    nb, (own,) = _mallory_runs(live, ("python", "--%python\nprint('mine')\n"))
    assert own.status == "done", own.error
    assert [o.text for o in live.store.iter_outputs(own.id)] == ["mine\n"]
    assert own.notebook_id == nb.id and live.store.log_file_of(own.id) == f"server/logs/{nb.id}/{own.id}.log.gz"


def test_a_300_mib_line_without_newline_stops_the_kernel_and_not_the_servers_memory(live: LiveServer) -> None:
    grew, attack, session = peak_growth_kb(live, LONG_LINE)
    assert grew < 50 * MB, f"the server grew by {grew // MB} MB"
    assert attack.status == "error" and "longer than 1048576 bytes" in session.reason, session.reason


@pytest.mark.slow  # the server decodes 40 MB of answers: 7-8 s here, more under load
def test_100k_unknown_answers_are_dropped_not_kept(live: LiveServer) -> None:
    grew, attack, session = peak_growth_kb(live, UNKNOWN_ANSWERS)
    assert grew < 50 * MB, f"the server grew by {grew // MB} MB"
    assert attack.status == "done", attack.error  # answers nobody asked for are dropped, not a crime
    assert session.kernel is not None and session.kernel.channel.dropped >= 100_000


def test_inside_the_sandbox_a_forged_event_changes_nothing_either(tmp_path: Path) -> None:
    """The same attack as the sandbox runs kernels by default: the cell cannot open its kernel's
    pipe (issue 20's walls), or what it writes is dropped as above; bob's run is untouched."""
    from console.cluster import sandbox

    if sandbox.unavailable_reason():
        pytest.skip(f"no sandbox here: {sandbox.unavailable_reason()}")
    server = LiveServer(str(tmp_path / "data"), kernel_module=REAL_KERNEL)
    try:
        bob = server.store.ensure_user("bob")
        (bobs,) = run_all(server, server.notebook(("python", "--%python\nprint('bob')\n"), owner="bob"), bob)
        assert bobs.status == "done", bobs.error
        before = stored(server, bobs.id)
        body = f'forge({{"type": "run_output", "run_id": "{bobs.id}", "text": "INJECTED"}})'
        mallory = server.store.ensure_user("mallory")
        (attack,) = run_all(server, server.notebook(forging_cell(body), owner="mallory"), mallory)
        if attack.status == "error":  # the walls: the kernel's /proc/<pid>/fd is not hers to open
            assert "PermissionError" in attack.error["message"], attack.error
        else:
            assert attack.status == "done", attack.error
        assert stored(server, bobs.id) == before
    finally:
        server.close()
