"""Users mapped to Ray clusters of their own (CONSOLE_RAY_CLUSTER_MAP, issue 29 item 3).

Two real Ray heads, each with Ray's token authentication and a custom resource naming its team,
stand for two teams' clusters (a KubeRay RayCluster each, in production). alice is mapped to
team A, bob to team B, carol to nothing. Each one's notebook, run through a real server whose
kernels are sandboxed, lands on its owner's cluster: alice's cell sees only team A's resources
and bob's named actor is not there to get; carol's runs where the server's own settings say.
A bad map stops the server's start with the reason.
"""
from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any, Iterator, NamedTuple

import pytest

from console.cluster.head import ClusterInfo, start_head
from console.cluster.procs import free_port, stop_process_group
from console.cluster.ray_map import BadClusterMap, load
from tests.support.clients import http

pytestmark = [pytest.mark.ray, pytest.mark.slow]

CELL = """--%python
import ray
from pyjava.api.mlsql import RayContext
RayContext.connect(globals(), "127.0.0.1:10001")
teams = sorted(k for k in ray.cluster_resources() if k.startswith("team_"))
try:
    ray.get_actor("{probe}", namespace="maps")
    found = True
except ValueError:
    found = False

@ray.remote
class Keeper:
    def ping(self):
        return 1

if "{keep}":
    keeper = Keeper.options(name="{keep}", namespace="maps", lifetime="detached").remote()
    ray.get(keeper.ping.remote())
print("TEAMS", ",".join(teams) or "-", "FOUND", found)
"""


class Teams(NamedTuple):
    a: ClusterInfo
    b: ClusterInfo
    map_file: Path


@pytest.fixture(scope="module")
def teams(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Teams]:
    base = tmp_path_factory.mktemp("ray-map")
    heads: list[ClusterInfo] = []
    spec: dict[str, Any] = {"clusters": {}, "users": {"alice": "team-a", "bob": "team-b"}}
    try:
        for team in ("a", "b"):
            token = secrets.token_hex(32)
            (base / f"{team}.token").write_text(token)
            info = start_head(Path(f"/tmp/rmap-{secrets.token_hex(4)}"), num_cpus=1, client_port=free_port(),
                              resources={f"team_{team}": 1}, log_path=base / f"{team}.log", auth_token=token)
            heads.append(info)
            spec["clusters"][f"team-{team}"] = {"address": f"ray://{info.client_address}",
                                                "token_file": str(base / f"{team}.token")}
        (base / "map.json").write_text(json.dumps(spec))
        yield Teams(heads[0], heads[1], base / "map.json")
    finally:
        for info in heads:
            assert info.pid is not None
            stop_process_group(info.pid, grace=3.0)


def _run(live: Any, owner: str, probe: str, keep: str = "") -> str:
    nb = live.notebook(("python", CELL.format(probe=probe, keep=keep)), owner=owner)
    status, started = http(live, "POST", f"/api/notebooks/{nb.id}/run", {"all": True}, user=owner)
    assert status == 202, started
    deadline = time.monotonic() + 240
    while True:
        status, run = http(live, "GET", f"/api/runs/{started['run_ids'][0]}", user=owner)
        if run["status"] not in ("queued", "running"):
            break
        assert time.monotonic() < deadline, run["status"]
        time.sleep(0.3)
    text = "".join(e.get("text", "") + e.get("message", "") for e in run.get("events", []))
    assert run["status"] == "done", text[-3000:]
    return text


@pytest.mark.ray_client
def test_each_owner_runs_on_the_cluster_mapped_to_them(teams: Teams, tmp_path: Path) -> None:
    from tests.support.live_server import REAL_KERNEL, LiveServer

    live = LiveServer(str(tmp_path / "data"), kernel_module=REAL_KERNEL, RAY_CLUSTER_MAP=str(teams.map_file),
                      RAY_NUM_CPUS=1)
    try:
        for name in ("alice", "bob", "carol"):
            live.store.ensure_user(name)
        # bob leaves a named actor on his cluster; alice looks for it on hers.
        assert "TEAMS team_b FOUND False" in _run(live, "bob", probe="nothing", keep="bobs")
        assert "TEAMS team_a FOUND False" in _run(live, "alice", probe="bobs")
        assert "TEAMS team_b FOUND True" in _run(live, "bob", probe="bobs")
        # carol is not mapped: a head of her session's own (the server's settings), no team's.
        assert "TEAMS - FOUND False" in _run(live, "carol", probe="bobs")
        # The Running page says where each session's Ray work runs; the address only to admins.
        status, mine = http(live, "GET", "/api/sessions", user="alice")
        assert status == 200 and {s["cluster"]["kind"] for s in mine["sessions"]} == {"team"}, mine
        assert all(s["cluster"]["name"] == "team-a" and "address" not in s["cluster"] for s in mine["sessions"])
        status, every = http(live, "GET", "/api/sessions", user="admin")
        seen = {s["cluster"].get("name"): s["cluster"] for s in every["sessions"]}
        assert seen["team-b"]["address"] == f"ray://{teams.b.client_address}" and seen["team-b"]["shared"]
        assert seen[None]["kind"] == "own" and not seen[None]["shared"], seen  # carol's own head
    finally:
        live.close()


@pytest.mark.parametrize("spec, says", [
    ({"clusters": {"a": {"address": "10.0.0.5:6379"}}, "users": {}}, "must be a Ray Client address"),
    ({"clusters": {"a": {"address": "ray://h:10001"}}, "users": {"alice": "b"}}, "not one of the clusters (a)"),
    ({"clusters": {"a": {"address": "ray://h:10001", "token_file": "/nonexistent/t"}}, "users": {}},
     "is not a readable file"),
    ({"clusters": {"a b": {"address": "ray://h:10001"}}, "users": {}}, "cluster name 'a b'"),
    ({"teams": {}}, 'with "clusters" and "users" only'),
    ([], 'with "clusters" and "users" only'),
])
def test_a_bad_map_is_refused_with_the_reason(tmp_path: Path, spec: Any, says: str) -> None:
    path = tmp_path / "map.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(BadClusterMap, match=f"CONSOLE_RAY_CLUSTER_MAP \\({path}\\): .*{_escaped(says)}"):
        load(str(path))


def test_a_server_with_a_bad_map_does_not_start(tmp_path: Path) -> None:
    from console.server import create_app

    (tmp_path / "map.json").write_text("{not json")
    with pytest.raises(BadClusterMap, match="not JSON"):
        create_app({"DATA_DIR": str(tmp_path / "data"), "TESTING": True, "RAY_CLUSTER_MAP": str(tmp_path / "map.json")})


def _escaped(text: str) -> str:
    import re

    return re.escape(text)
