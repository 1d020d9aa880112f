"""Users mapped to Ray clusters of their own (CONSOLE_RAY_CLUSTER_MAP), so a team runs on its own cluster.

An existing cluster (CONSOLE_RAY_ADDRESS) is one trust zone: Ray has no access control between
the jobs of one cluster. Where teams must not share one, the admin runs a cluster per team (a
KubeRay `RayCluster` each, say) and maps users to them in a JSON file:

    {"clusters": {"team-a": {"address": "ray://10.0.0.5:10001", "token_file": "/etc/console/a.token"},
                  "team-b": {"address": "ray://10.0.0.6:10001"}},
     "users": {"alice": "team-a", "bob": "team-b"}}

A notebook's session runs on its owner's cluster, whoever runs it (one session per notebook, as
its globals are one). A user the map does not name runs where the server's own settings say
(CONSOLE_RAY_ADDRESS, else a head of the session's own). Addresses are Ray Client ones
(`ray://host:port`): a GCS address needs a node of that cluster joined on this machine, which
the server keeps one of per data dir. The file is read once, at start; a bad one stops the
start with the reason.

Runs in: the server (kernels.py picks the cluster when it starts a kernel).
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ADDRESS = re.compile(r"^ray://[A-Za-z0-9.\-\[\]:]+:\d{1,5}$")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


class BadClusterMap(ValueError):
    """CONSOLE_RAY_CLUSTER_MAP names a file that is not a valid map; the message says where."""


@dataclass(frozen=True)
class MappedCluster:
    name: str
    address: str
    token_file: str | None = None


@dataclass(frozen=True)
class ClusterMap:
    clusters: dict[str, MappedCluster]
    users: dict[str, str]  # user name -> cluster name

    def cluster_of(self, user_name: str | None) -> MappedCluster | None:
        name = self.users.get(user_name or "")
        return self.clusters[name] if name is not None else None


def load(path: str) -> ClusterMap:
    """Read and check the map file; BadClusterMap names the file and what is wrong in it."""
    where = f"CONSOLE_RAY_CLUSTER_MAP ({path})"
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadClusterMap(f"{where}: cannot read it ({exc.strerror})") from None
    except ValueError as exc:
        raise BadClusterMap(f"{where}: not JSON ({exc})") from None
    if not isinstance(raw, dict) or set(raw) - {"clusters", "users"}:
        raise BadClusterMap(f'{where}: expected an object with "clusters" and "users" only')
    clusters_raw, users_raw = raw.get("clusters") or {}, raw.get("users") or {}
    if not isinstance(clusters_raw, dict) or not isinstance(users_raw, dict):
        raise BadClusterMap(f'{where}: "clusters" and "users" must be objects')
    clusters: dict[str, MappedCluster] = {}
    for name, spec in clusters_raw.items():
        if not _NAME.match(name):
            raise BadClusterMap(f"{where}: cluster name {name[:80]!r} (letters, digits, _ . -; at most 64)")
        if not isinstance(spec, dict) or set(spec) - {"address", "token_file"}:
            raise BadClusterMap(f'{where}: cluster {name!r}: expected {{"address": …, "token_file": …}}')
        address, token_file = spec.get("address"), spec.get("token_file")
        if not isinstance(address, str) or not _ADDRESS.match(address):
            raise BadClusterMap(f"{where}: cluster {name!r}: address must be a Ray Client address "
                                f"(ray://host:port), not {str(address)[:100]!r}")
        if token_file is not None and not isinstance(token_file, str):
            raise BadClusterMap(f"{where}: cluster {name!r}: token_file must be a path")
        if token_file is not None and not Path(token_file).is_file():
            raise BadClusterMap(f"{where}: cluster {name!r}: token_file {token_file} is not a readable file")
        clusters[name] = MappedCluster(name, address, token_file)
    users: dict[str, str] = {}
    for user, cluster in users_raw.items():
        if not isinstance(cluster, str) or cluster not in clusters:
            raise BadClusterMap(f"{where}: user {str(user)[:80]!r} is mapped to {str(cluster)[:80]!r}, "
                                f"which is not one of the clusters ({', '.join(sorted(clusters)) or 'none'})")
        users[user] = cluster
    return ClusterMap(clusters, users)


def config_for(cfg: Any, cluster: MappedCluster | None) -> Any:
    """The settings a kernel on `cluster` starts with (cfg itself when the user is not mapped)."""
    if cluster is None:
        return cfg
    return dataclasses.replace(cfg, RAY_ADDRESS=cluster.address, RAY_AUTH_TOKEN_FILE=cluster.token_file)


def from_settings(cfg: Mapping[str, Any]) -> ClusterMap | None:
    path = cfg.get("RAY_CLUSTER_MAP")
    return load(str(path)) if path else None


__all__ = ["BadClusterMap", "ClusterMap", "MappedCluster", "config_for", "from_settings", "load"]
