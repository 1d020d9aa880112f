"""GET /api/notebooks/<id>/environment: the notebook's own packages, for the Environment panel (issue 31).

The requirements and lock hash come from the store. The exact versions come from the layer's
meta.json, which a kernel wrote (it runs a member's code): read bounded, and only names and
versions that are short text are shown.
"""
from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from console.server.deps import get_config, get_store

MAX_META_BYTES = 1 << 20
MAX_PACKAGES = 1000


def layer_packages(data_dir: Any, lock_hash: str) -> dict[str, str]:
    """canonical name -> version of the layer built for `lock_hash`; {} when none is readable."""
    if not lock_hash:  # checked hex by console/wire/environment.py, so no path walks out of envs/
        return {}
    try:
        with open(data_dir / "envs" / lock_hash / "meta.json", "rb") as f:
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
