"""A run manifest is the kernel's word, and a member's cell can write on its kernel's pipe (issue 32).

What must hold: a manifest about someone else's run is dropped; one about the cell's own run is
kept as reported but nothing in it is verified unless the lake's own log says so (a version the
log lacks, a table outside the lake, a write committed before the run); one past the decoder's
caps is a protocol break; a run keeps at most MAX_RUN_ENTRIES entries whatever arrives. The
server never opens a path an entry names. The checks also run without kernels.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from console.ids import CellId, RunId
from console.server.sessions import manifests
from console.server.sessions.kernel_session import QueuedRun
from console.wire.codec import DecodeError
from console.wire.kernel import FROM_KERNEL, ManifestEntry, RunManifest
from forge_support import own_run_cell, run_all, wait_run
from tests.support.live_server import REAL_KERNEL, LiveServer

ENTRY = {"access": "read", "format": "delta", "path": "db.t", "version": 0}


# ---------------------------------------------------------------- the checks, without kernels


def test_the_decoder_refuses_manifests_past_their_caps() -> None:
    with pytest.raises(DecodeError, match=r"entries: more than 200 items"):
        FROM_KERNEL.decode({"type": "run_manifest", "run_id": "r1", "entries": [ENTRY] * 201})
    with pytest.raises(DecodeError, match=r"path: longer than 4096 characters"):
        FROM_KERNEL.decode({"type": "run_manifest", "run_id": "r1", "entries": [dict(ENTRY, path="x" * 4097)]})
    with pytest.raises(DecodeError, match=r"version: must be an integer within 0\.\."):
        FROM_KERNEL.decode({"type": "run_manifest", "run_id": "r1", "entries": [dict(ENTRY, version=-1)]})
    with pytest.raises(DecodeError, match=r"access: must be one of"):
        FROM_KERNEL.decode({"type": "run_manifest", "run_id": "r1", "entries": [dict(ENTRY, access="delete")]})
    with pytest.raises(DecodeError, match=r"mtime: must be a finite number"):
        FROM_KERNEL.decode_line('{"type": "run_manifest", "run_id": "r1", "entries": '
                                '[{"access": "read", "format": "csv", "path": "x", "mtime": NaN}]}')
    ok = FROM_KERNEL.decode({"type": "run_manifest", "run_id": "r1", "entries": [ENTRY]})
    assert isinstance(ok, RunManifest) and ok.entries == [ManifestEntry("read", "delta", "db.t", version=0)]


def test_a_run_keeps_at_most_its_cap_of_entries_whatever_arrives() -> None:
    run = QueuedRun(RunId("r1"), CellId("c1"), "", "mlsql")
    msg = RunManifest(RunId("r1"), [ManifestEntry("read", "csv", "x")] * 200, dropped=5)
    for _ in range(6):
        manifests.accept(run, msg)
    assert len(run.io) == manifests.MAX_RUN_ENTRIES
    assert run.io_dropped == 6 * 200 + 6 * 5 - manifests.MAX_RUN_ENTRIES


def test_only_lake_names_are_checked_and_nothing_outside_the_lake_is_opened(tmp_path: Path) -> None:
    assert manifests.lake_name("db.t") == "db.t" and manifests.lake_name("t") == "default.t"
    assert manifests.lake_name("lake:db/t") == "db.t" and manifests.lake_name("db/t/") == "db.t"
    for bad in ("../db/t", "/etc/passwd", "db/../../t", "a.b.c", "db/t/_delta_log", ""):
        assert manifests.lake_name(bad) is None, bad
    outside = tmp_path / "elsewhere" / "db" / "t" / "_delta_log"
    outside.mkdir(parents=True)
    (outside / f"{0:020d}.json").write_text('{"commitInfo": {"timestamp": 1}}\n')
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "db").symlink_to(tmp_path / "elsewhere" / "db")  # a link a cell planted: never followed
    checked = manifests.verify(lake, [dict(ENTRY), dict(ENTRY, path=str(outside.parent))], 0.0, time.time())
    assert [e["verified"] for e in checked] == [False, False]
    assert all("not a delta table of the lake" in e["check"] for e in checked), checked


def test_versions_are_checked_against_the_lakes_own_log_and_commit_times(tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    lake = tmp_path / "lake"
    before = time.time() - 0.01
    write_deltalake(str(lake / "db" / "t"), pa.table({"a": [1]}))
    after = time.time()
    (lake / "db" / "linked").symlink_to(lake / "db" / "t")  # a table reached through a link: never read
    read, write = dict(ENTRY), dict(ENTRY, access="write", mode="overwrite")
    checked = manifests.verify(lake, [read, write, dict(ENTRY, path="db/t", version=1),
                                      dict(ENTRY, path="db.linked")], before, after)
    assert [e["verified"] for e in checked] == [True, True, False, False], checked
    assert checked[2]["check"] == "the lake's log of db.t has no version 1"
    # the same write, claimed by a run that started after it (past the clock slack): not this run's
    late = manifests.verify(lake, [write, read], after + 5, after + 6)
    assert [e["verified"] for e in late] == [False, True] and "not committed while this run ran" in late[0]["check"]
    # and a read of a version committed after the run ended
    early = manifests.verify(lake, [read], before - 60, before - 5)
    assert early[0]["verified"] is False and "after this run ended" in early[0]["check"]


# ---------------------------------------------------------------- a cell forging on its kernel's pipe


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Unsandboxed: under the walls a cell cannot open its kernel's pipe at all
    # (tests/wire/test_forged_kernel_events.py tries that); this is about what the server does.
    server = LiveServer(str(tmp_path_factory.mktemp("forged-manifest") / "data"), kernel_module=REAL_KERNEL,
                        SANDBOX="off")
    try:
        yield server
    finally:
        server.close()



@pytest.mark.slow
def test_forged_manifests_are_dropped_or_kept_unverified(live: LiveServer, tmp_path: Path) -> None:
    bob = live.store.ensure_user("bob")
    bobs_nb = live.notebook("select 1 as a as t;\nsave overwrite t as delta.`forged.bobs`;", owner="bob")
    (bobs,) = run_all(live, bobs_nb, bob)
    assert bobs.status == "done", bobs.error
    bobs_manifest = live.store.get_manifest(bobs.id)
    assert [(e["version"], e["verified"]) for e in bobs_manifest.entries] == [(0, True)]

    # Bob committed a minute ago (his log says so): well before mallory's run, past the clock slack,
    # without this test waiting for the slack to pass.
    log = live.manager.cfg.data_dir / "lake" / "forged" / "bobs" / "_delta_log" / f"{0:020d}.json"
    actions = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    for action in actions:
        if "commitInfo" in action:
            action["commitInfo"]["timestamp"] -= 60_000
    log.write_text("".join(json.dumps(a) + "\n" for a in actions))
    lies = [
        dict(ENTRY, access="write", path="forged.bobs", table="forged.bobs", version=0, mode="overwrite"),
        dict(ENTRY, path="forged.bobs", version=99),
        dict(ENTRY, path="/etc/passwd", version=3),
        dict(ENTRY, path="forged.bobs", table="other.table", version=0),
    ]
    body = f"""
forge({{"type": "run_manifest", "run_id": "{bobs.id}", "entries": [{json.dumps(ENTRY)}]}},
      {{"type": "run_manifest", "run_id": own, "entries": {json.dumps(lies)}}})
time.sleep(0.3)
"""
    mallory = live.store.ensure_user("mallory")
    run_file = tmp_path / "run_id"
    nb = live.notebook(own_run_cell(run_file, body), owner="mallory")
    (run_id,) = live.manager.run(mallory.id, nb.id, "all")
    run_file.write_text(run_id)
    attack = wait_run(live, run_id)
    assert attack.status == "done", attack.error

    assert live.store.get_manifest(bobs.id) == bobs_manifest  # another run's manifest: dropped
    kept = live.store.get_manifest(run_id)
    assert kept is not None
    checks = {(e["path"], e["access"], e["version"]): (e["verified"], e["check"]) for e in kept.entries}
    assert checks[("forged.bobs", "write", 0)] == (False, "version 0 of forged.bobs was not committed while this "
                                                          "run ran")
    assert checks[("forged.bobs", "read", 99)] == (False, "the lake's log of forged.bobs has no version 99")
    assert checks[("/etc/passwd", "read", 3)][0] is False
    assert "not a delta table of the lake" in checks[("/etc/passwd", "read", 3)][1]
    assert checks[("forged.bobs", "read", 0)][0] is False  # its table does not match its path
    session = live.manager.session(None, nb.id)
    assert session.dropped >= 1 and session.status == "idle", session.reason


@pytest.mark.slow
def test_an_oversized_manifest_on_the_kernel_pipe_stops_the_kernel(live: LiveServer, tmp_path: Path) -> None:
    mallory = live.store.ensure_user("mallory")
    run_file = tmp_path / "run_id"
    body = f'forge({{"type": "run_manifest", "run_id": own, "entries": {json.dumps([ENTRY] * 201)}}})\n' \
           "time.sleep(30)\n"
    nb = live.notebook(own_run_cell(run_file, body), owner="mallory")
    (run_id,) = live.manager.run(mallory.id, nb.id, "all")
    run_file.write_text(run_id)
    attack = wait_run(live, run_id)
    session = live.manager.session(None, nb.id)
    assert attack.status == "error" and "broke the kernel protocol" in attack.error["message"], attack.error
    assert "entries: more than 200 items" in session.reason, session.reason
    stored: Any = live.store.get_manifest(run_id)
    assert stored is not None and stored.entries == []  # the run's manifest: revision and parameters only


@pytest.mark.slow
def test_a_forged_lineage_names_no_run_of_another_notebook(live: LiveServer, tmp_path: Path) -> None:
    bob = live.store.ensure_user("bob")
    (bobs,) = run_all(live, live.notebook("select 1 as a as t;", owner="bob"), bob)
    model = dict(ENTRY, access="write", path="forged.model", table="forged.model", version=0, mode="overwrite",
                 model=True, trained_by=bobs.id,
                 sources=[{"format": "delta", "path": "forged.bobs", "table": "forged.bobs", "version": 99,
                           "run_id": bobs.id}, {"format": "csv", "path": "/etc/shadow", "run_id": "x y"}])
    mallory = live.store.ensure_user("mallory")
    run_file = tmp_path / "run_id"
    entry = json.dumps(model).replace("true", "True")  # Python's spelling: the cell's code
    body = f'forge({{"type": "run_manifest", "run_id": own, "entries": [{entry}]}})\ntime.sleep(0.3)\n'
    nb = live.notebook(own_run_cell(run_file, body), owner="mallory")
    (run_id,) = live.manager.run(mallory.id, nb.id, "all")
    run_file.write_text(run_id)
    assert wait_run(live, run_id).status == "done"
    (kept,) = live.store.get_manifest(run_id).entries
    assert kept["trained_by"] == bobs.id  # kept as the kernel said it, and checked when shown:
    (shown,) = manifests.with_runs(live.store, nb.id, [kept])
    assert "trained_by" not in shown, shown  # bob's run is not of this notebook: not named
    assert [s.get("read_by") for s in shown["sources"]] == [None, None]
    assert [s["verified"] for s in shown["sources"]] == [False, False]  # v99 is in no log; a csv never is
    assert "run_id" not in kept["sources"][1]  # not a run id's spelling: not even kept
