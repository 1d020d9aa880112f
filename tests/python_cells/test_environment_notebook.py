"""A notebook's requirements are part of the notebook (issue 31): `%pip install` through the real
server and a real kernel keeps the list in the store, a restarted kernel (or a headless run of the
exported file) starts in the same layer without the %pip cell, and another notebook does not see it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from console.config import load_config
from console.kernel.headless import run_file
from tests.support.clients import http, runs_ended
from tests.support.jobs import after_runs, jobs_server
from tests.support.live_server import REAL_KERNEL, LiveServer
from tests.support.wheels import make_wheel

PIP = "%pip install consoletestpkg==1.2\n"
IMPORT = ("import consoletestpkg\nassert consoletestpkg.__version__ == '1.2'\n"
          "print('version', consoletestpkg.__version__)\n")


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # In the data dir: a sandboxed kernel sees its own /tmp, not the test's.
    folder = tmp_path_factory.mktemp("envnb") / "wheelhouse"
    folder.mkdir()
    make_wheel(folder, "consoletestpkg", "1.2", '__version__ = "1.2"\n')
    return folder


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Iterator[LiveServer]:
    # A serving scheduler too, for the job run below.
    with jobs_server(str(wheelhouse.parent), kernel_module=REAL_KERNEL, PIP_INDEX_URL="none",
                     PIP_FIND_LINKS=str(wheelhouse)) as server:
        yield server


def run(live: LiveServer, nb: Any, cell_id: str, timeout: float = 180.0) -> Any:
    status, body = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"cell_id": cell_id})
    assert status == 202, body
    (rec,) = runs_ended(live, [body["run_ids"][0]], timeout)
    return rec


def test_the_requirements_live_with_the_notebook(live: LiveServer, wheelhouse: Path, tmp_path: Path) -> None:
    nb = live.notebook(("python", PIP), ("python", IMPORT))
    pip_cell, import_cell = (c.id for c in nb.cells)
    pip_rec = rec = run(live, nb, pip_cell)
    assert rec.status == "done", rec.error
    env = live.store.get_environment(nb.id)
    assert env["requirements"] == ["consoletestpkg==1.2"] and len(env["lock_hash"]) == 24
    status, shown = http(live, "GET", f"/api/notebooks/{nb.id}/environment")
    assert status == 200 and shown["lock_hash"] == env["lock_hash"]
    assert shown["packages"] == [{"name": "consoletestpkg", "version": "1.2", "requested": "consoletestpkg==1.2",
                                  "source": "requirement"}]

    # A new kernel of the notebook gets the list at start: the import works without the %pip cell.
    status, body = http(live, "POST", f"/api/notebooks/{nb.id}/restart")
    assert status < 300, body
    rec = run(live, nb, import_cell)
    assert rec.status == "done", rec.error
    # The cell's run records the lock it ran in, with its manifest (the %pip run too).
    for run_id in (rec.id, pip_rec.id):
        status, manifest = http(live, "GET", f"/api/runs/{run_id}/manifest")
        assert status == 200 and manifest["recorded"] and manifest["lock_hash"] == env["lock_hash"], manifest

    # The run made a history row: the revision keeps the list, so a job at that revision has it.
    revision = live.store.get_notebook(nb.id).revision
    assert live.store.get_environment(nb.id, revision)["requirements"] == ["consoletestpkg==1.2"]

    # Another notebook does not see it.
    other = live.notebook(("python", IMPORT))
    rec = run(live, other, other.cells[0].id)
    assert rec.status == "error" and "consoletestpkg" in json.dumps(rec.error)
    assert http(live, "GET", f"/api/runs/{rec.id}/manifest")[1]["lock_hash"] == ""
    assert live.store.get_environment(other.id)["requirements"] == []
    assert http(live, "GET", f"/api/notebooks/{other.id}/environment")[1]["packages"] == []

    # The exported file carries it, and a headless run of that file builds it and names the lock.
    status, data = http(live, "GET", f"/api/notebooks/{nb.id}/export")
    assert status == 200 and data["metadata"]["environment"] == env
    data["cells"] = [c for c in data["cells"] if "%pip" not in c["source"]]
    path = tmp_path / "exported.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    lines: list[str] = []
    cfg = load_config({"DATA_DIR": str(tmp_path / "headless"), "PIP_INDEX_URL": "none",
                       "PIP_FIND_LINKS": str(wheelhouse)})
    assert run_file(path, cfg, out=lines.append) == 0, lines
    assert "version 1.2" in "\n".join(lines)
    assert f"-- environment: lock {env['lock_hash']}" in lines

    # Imported, the notebook keeps the list.
    status, body = http(live, "POST", "/api/notebooks/import", json.loads(path.read_text()))
    assert status == 201, body
    assert live.store.get_environment(body["id"]) == env
    copy = live.store.duplicate_notebook(nb.id)
    assert live.store.get_environment(copy.id) == env


def test_a_job_runs_in_the_environment_of_its_revision_and_records_the_lock(live: LiveServer) -> None:
    nb = live.notebook(("python", PIP))
    rec = run(live, nb, nb.cells[0].id)
    assert rec.status == "done", rec.error
    lock = live.store.get_environment(nb.id)["lock_hash"]
    # The %pip cell is gone from the notebook: the job's kernel has the package from the list alone.
    nb = live.store.update_notebook(nb.id, nb.revision, cells=[{"kind": "python", "source": IMPORT}])
    status, job = http(live, "POST", "/api/jobs", {"notebook_id": nb.id, "every_minutes": 60})
    assert status == 201, job
    status, queued = http(live, "POST", f"/api/jobs/{job['id']}/run", {})
    assert status == 202, queued

    def ended() -> dict[str, Any] | None:
        status, body = http(live, "GET", f"/api/jobs/{job['id']}/runs")
        runs = body["runs"] if status == 200 else []
        return runs[0] if runs and runs[0]["status"] not in ("queued", "running") else None

    done = after_runs(live, ended, "the job's run", timeout=180.0)
    assert done["status"] == "done", done["error"]
    assert done["lock_hash"] == lock != "" and done["revision"] == nb.revision
    assert live.store.get_environment(nb.id, nb.revision)["lock_hash"] == lock


def test_a_kernel_cannot_store_a_url_requirement(live: LiveServer) -> None:
    from console.store.errors import Invalid

    nb = live.notebook(("python", "x = 1\n"))
    with pytest.raises(Invalid):
        live.store.set_environment(nb.id, {"requirements": ["evil @ file:///etc"], "lock_hash": ""})
    with pytest.raises(Invalid):
        live.store.set_environment(nb.id, {"requirements": ["a"] * 201, "lock_hash": ""})
    assert live.store.get_environment(nb.id)["requirements"] == []


def test_a_replay_names_an_environment_changed_since_and_forced_runs_in_todays(live: LiveServer) -> None:
    nb = live.notebook(("python", PIP), ("python", IMPORT), ("python", "%pip uninstall consoletestpkg\n"))
    pip_cell, import_cell, uninstall_cell = (c.id for c in nb.cells)
    assert run(live, nb, pip_cell).status == "done"
    recorded = run(live, nb, import_cell)
    assert recorded.status == "done", recorded.error
    lock = live.store.get_manifest(recorded.id).lock_hash
    assert lock

    def replay(body: dict[str, Any]) -> Any:
        status, answer = http(live, "POST", f"/api/runs/{recorded.id}/replay", body)
        assert status == 202 and answer["replay_of"] == recorded.id, answer
        (rec,) = runs_ended(live, [answer["run_id"]], 180)
        assert live.store.get_manifest(rec.id).replay_of == recorded.id  # the replay's own record says so
        return rec

    same = replay({})  # nothing changed: it runs
    assert same.status == "done", same.error
    assert run(live, nb, uninstall_cell).status == "done"
    refused = replay({})
    assert refused.status == "error", refused
    assert (f"the notebook's environment changed since the recorded run (lock {lock[:12]} then, the base "
            "environment now)") in refused.error["message"], refused.error
    forced = replay({"force": True})  # in today's environment, where the package is gone
    assert forced.status == "error" and "consoletestpkg" in json.dumps(forced.error), forced.error
