"""A notebook's `%pip` packages reach the Ray actors of its cells (runtime_env env_vars PYTHONPATH)."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from console.config import load_config
from console.kernel.session import Session
from tests.support.wheels import make_wheel

CELL = """import ray
from pyjava.api.mlsql import RayContext
RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Probe:
    def version(self):
        import consoletestpkg
        return consoletestpkg.__version__

print("actor sees", ray.get(Probe.remote().version.remote()))
"""


def test_an_actor_of_the_notebook_imports_its_package(ray_head: Any, tmp_path: Path) -> None:
    make_wheel(tmp_path, "consoletestpkg", "1.2", '__version__ = "1.2"\n')
    cfg = load_config({**dict(ray_head.cfg), "PIP_INDEX_URL": "none", "PIP_FIND_LINKS": str(tmp_path)})
    events: list[Any] = []
    s = Session(cfg, events.append, session_id=f"t-{uuid.uuid4().hex[:8]}")
    try:
        out = s.run_cell("%pip install consoletestpkg==1.2\n" + CELL, kind="python", cell=1)
        assert out.ok, out.error
        printed = "".join(e.text for e in events if e.type == "output" and e.stream == "stdout")
        assert "actor sees 1.2" in printed
    finally:
        s.shutdown()
