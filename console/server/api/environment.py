"""GET /api/notebooks/<id>/environment: the notebook's own packages, for the Environment panel (issue 31).

The requirements and lock hash come from the store. The exact versions come from the layer's
meta.json, which a kernel wrote (it runs a member's code): read bounded, and only names and
versions that are short text are shown.
"""
from __future__ import annotations

import json
import os
import re
import stat
from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from console.server.deps import get_config, get_store

MAX_META_BYTES = 1 << 20
_PRIVATE = re.compile(r"[0-9a-f]{1,64}-[0-9a-f]{16}")
MAX_PACKAGES = 1000


def layer_packages(data_dir: Any, lock_hash: str) -> dict[str, str]:
    """canonical name -> version of the layer built for `lock_hash`; {} when none is readable."""
    if not lock_hash:  # checked hex by console/wire/environment.py, so no path walks out of envs/
        return {}
    # A sandboxed kernel's layer is its own: `<lock hash>-<random>` (console/kernel/envs.py). The
    # newest one of this lock says what it holds; the names are matched, never followed as paths.
    envs = data_dir / "envs"
    try:
        names = [n for n in os.listdir(envs)
                 if n == lock_hash or (_PRIVATE.fullmatch(n) and n.startswith(lock_hash + "-"))]
        name = lock_hash if lock_hash in names else max(names, key=lambda n: os.lstat(envs / n).st_mtime,
                                                        default="")
        if not name:
            return {}
        if not stat.S_ISDIR(os.lstat(envs / name).st_mode):
            return {}  # a link a kernel planted: never followed by the server
        fd = os.open(envs / name / "meta.json", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return {}
            meta = json.loads(f.read(MAX_META_BYTES + 1)[:MAX_META_BYTES])
    except (OSError, ValueError):
        return {}
    packages = meta.get("packages") if isinstance(meta, dict) else None
    if not isinstance(packages, dict):
        return {}
    return {k: v for k, v in list(packages.items())[:MAX_PACKAGES]
            if isinstance(k, str) and isinstance(v, str) and 0 < len(k) <= 200 and 0 < len(v) <= 100}


def notebook_environment(notebook_id: str) -> ResponseReturnValue:
    env = get_store().get_environment(notebook_id)
    versions = layer_packages(get_config().data_dir, env["lock_hash"])
    asked = {str(canonicalize_name(Requirement(r).name)): r for r in env["requirements"]}
    packages = [{"name": n, "version": versions.get(n, ""), "requested": asked.get(n, ""),
                 "source": "requirement" if n in asked else "dependency"}
                for n in sorted(set(versions) | set(asked))]
    return jsonify({**env, "packages": packages})


def create_blueprint() -> Blueprint:
    bp = Blueprint("environment", __name__, url_prefix="/notebooks")
    bp.add_url_rule("/<notebook_id>/environment", "get", notebook_environment, methods=["GET"])
    return bp
