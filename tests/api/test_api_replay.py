"""Re-run as recorded, through the real server and a real kernel (issue 32 item 2): a run that read
a delta table at v0 reads v0 again after later writes, gives the same answer and its diff with the
recorded run says "same"; a plain file that changed is named and refused unless forced; a viewer
may not replay; a forged replay on the kernel pipe is decoded like every command."""
from __future__ import annotations

from typing import Any

import pytest

from console.kernel.replay import pinned_options
from console.wire.codec import DecodeError
from console.wire.kernel import TO_KERNEL
from tests.support.clients import http, live_server_fixture, runs_ended as ended
from tests.support.live_server import LiveServer

live = live_server_fixture("replay-data")


def run(live: LiveServer, nb: Any, cell: int) -> str:
    status, answer = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": nb.cells[cell].id})
    assert status == 202, answer
    (r,) = ended(live, answer["run_ids"])
    assert r.status == "done", r.error
    return str(answer["run_ids"][0])


def replay(live: LiveServer, run_id: str, body: dict[str, Any] | None = None, user: str | None = None) -> Any:
    status, answer = http(live, "POST", f"/api/runs/{run_id}/replay", body or {}, user=user)
    if status != 202:
        return status, answer
    (r,) = ended(live, [answer["run_id"]])
    return status, r


def count(live: LiveServer, run_id: str) -> Any:
    result = live.store.get_run(run_id).result
    assert result is not None
    return result["rows"][0][0]


def test_a_replay_reads_the_recorded_delta_version_and_gives_the_same_answer(live: LiveServer) -> None:
    nb = live.notebook("select 1 as a as t;\nsave overwrite t as delta.`rp.features`;",
                       "load delta.`rp.features` as f;\nselect count(*) as n from f as c;",
                       "select 2 as a as t2;\nsave append t2 as delta.`rp.features`;")
    run(live, nb, 0)
    recorded = run(live, nb, 1)
    assert count(live, recorded) == 1
    run(live, nb, 2)  # v1: two rows now
    assert count(live, run(live, nb, 1)) == 2

    status, again = replay(live, recorded)
    assert status == 202 and again.status == "done", again.error
    assert count(live, again.id) == 1  # v0, as recorded
    (read,) = [e for e in live.store.get_manifest(again.id).entries if e["access"] == "read"]
    assert (read["table"], read["version"], read["verified"]) == ("rp.features", 0, True), read
    status, d = http(live, "GET", f"/api/runs/{recorded}/diff/{again.id}")
    assert status == 200 and d["same"] and d["result"]["a"]["digest"] == d["result"]["b"]["digest"], d


def test_a_changed_file_is_named_and_refused_unless_forced(live: LiveServer) -> None:
    folder = live.manager.cfg.data_dir / "lake" / "rp_in"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "x.csv").write_text("a\n1\n2\n")
    nb = live.notebook("load csv.`rp_in/x.csv` where header=\"true\" as raw;\nselect count(*) as n from raw as k;")
    recorded = run(live, nb, 0)
    status, same = replay(live, recorded)
    assert status == 202 and same.status == "done", same.error  # unchanged: runs
    (folder / "x.csv").write_text("a\n1\n2\n3\n")
    status, refused = replay(live, recorded)
    assert status == 202 and refused.status == "error", refused
    assert "rp_in/x.csv changed since the recorded run: size, digest differ" in refused.error["message"], \
        refused.error
    status, forced = replay(live, recorded, {"force": True})
    assert status == 202 and forced.status == "done" and count(live, forced.id) == 3, forced.error


def test_only_a_runner_replays_and_the_body_is_typed(live: LiveServer) -> None:
    nb = live.notebook("select 1 as a as t;")
    recorded = run(live, nb, 0)
    vic = live.store.ensure_user("vic")
    live.store.set_share(vic.id, "viewer", notebook_id=nb.id)
    status, answer = replay(live, recorded, user="vic")
    assert status == 403, answer
    status, answer = replay(live, recorded, {"force": "yes"})
    assert status == 400 and answer["error"] == "'force' must be true or false", answer
    status, answer = replay(live, recorded, {"pins": {"rp.features": 0}})  # only the server sets pins
    assert status == 400 and answer["error"].startswith("unknown field pins"), answer


def test_pins_on_the_kernel_pipe_are_decoded_and_a_load_with_its_own_version_keeps_it() -> None:
    bad = {"type": "execute", "run_id": "r1", "cell_id": "c1", "source": "", "replay": {"pins": {"t": -1}}}
    with pytest.raises(DecodeError):
        TO_KERNEL.decode(bad)
    with pytest.raises(DecodeError):
        TO_KERNEL.decode({**bad, "replay": {"pins": {"t": "0"}}})
    assert pinned_options({"db.t": 3}, "db.t", {}) == {"versionAsOf": "3"}
    assert pinned_options({"db.t": 3}, "db.t", {"versionAsOf": "1"}) == {"versionAsOf": "1"}
    assert pinned_options({"db.t": 3}, "db.u", {"mergeSchema": "true"}) == {"mergeSchema": "true"}


def test_the_command_line_replays_a_run_headless_and_compares_its_result(live: LiveServer) -> None:
    from click.testing import CliRunner

    from console.cli import main

    nb = live.notebook("select 1 as a as t;\nsave overwrite t as delta.`rpc.features`;",
                       "load delta.`rpc.features` as f;\nselect count(*) * 10 as n10 from f as base;",
                       "select n10 + 1 as n from base as later;",
                       "select 2 as a as t2;\nsave append t2 as delta.`rpc.features`;")
    run(live, nb, 0)
    recorded = run(live, nb, 1)
    dependent = run(live, nb, 2)
    run(live, nb, 3)  # v1: two rows now
    versions = len(list((live.manager.cfg.data_dir / "lake" / "rpc" / "features" / "_delta_log").glob("*.json")))
    data_dir = str(live.manager.cfg.data_dir)
    same = CliRunner().invoke(main, ["replay", recorded, "--data-dir", data_dir])
    # The cell reads v0 again (one row, 10), as recorded, though v1 holds two.
    assert same.exit_code == 0, same.output
    assert '"rpc.features": 0' in same.output and "-- same result as the recorded run" in same.output, same.output
    # Only the cell runs: the one before it, which writes, does not (no new version of the table).
    assert len(list((live.manager.cfg.data_dir / "lake" / "rpc" / "features" / "_delta_log").glob("*.json"))) \
        == versions
    # A cell that uses a table an earlier cell made fails here, naming it: the notebook replays it.
    alone = CliRunner().invoke(main, ["replay", dependent, "--data-dir", data_dir])
    assert alone.exit_code == 1 and "table 'base' not found" in alone.output, alone.output
    missing = CliRunner().invoke(main, ["replay", "no-such-run", "--data-dir", data_dir])
    assert missing.exit_code != 0 and "no run 'no-such-run'" in missing.output, missing.output
