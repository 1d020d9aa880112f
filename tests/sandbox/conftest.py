"""A real server in login mode whose kernels and Ray head run in the sandbox, and a hostile member.

The server (create_app in this process, served over HTTP by tests/support's `Served`) owns its
data dir's embedded Ray head, which it starts sandboxed at the first Python cell and stops at
the end. "mallory" is a member with no share on anything: she runs only her own notebooks.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from console.cluster.procs import free_port
from console.server.auth import hash_password
from tests.support.live_server import REAL_KERNEL, Served, _pythonpath
from tests.support.wheels import make_wheel
from walled_support import PASSWORD, Walled


@pytest.fixture(scope="session")
def walled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walled]:
    from console.server import create_app

    data_dir = tmp_path_factory.mktemp("walled") / "data"
    # A wheelhouse the sandboxes can read (their /tmp is their own): `%pip install` without a network.
    wheelhouse = data_dir / "wheelhouse"
    wheelhouse.mkdir(parents=True)
    make_wheel(wheelhouse, "consoletestpkg", "1.2", '__version__ = "1.2"\n')
    app = create_app({"DATA_DIR": str(data_dir), "TESTING": True, "SINGLE_USER": False, "RAY_NUM_CPUS": 2,
                      "PIP_INDEX_URL": "none", "PIP_FIND_LINKS": str(wheelhouse),
                      "RAY_CLIENT_PORT": free_port(), "KERNEL_ENV": {"PYTHONPATH": _pythonpath()},
                      # Low enough that a hog or a storm passes them quickly; every probe is a notebook of
                      # its own, so mallory's kernels are many (the cap has its own test).
                      "SESSION_MEMORY": "1G", "SESSION_PROCESSES": 256, "SESSIONS_PER_USER": 0},
                     kernel_module=REAL_KERNEL)
    store = app.extensions["store"]
    for name in ("alice", "mallory"):
        store.create_user(name, hash_password(PASSWORD))
    # alice's notebook, shared with nobody: what mallory would like to own
    alice = store.get_user_by_name("alice")
    store.create_notebook("alice-private", owner_id=alice.id,
                          cells=[{"kind": "mlsql", "source": "select 1 as a as t;"}])
    served = Served(app)
    try:
        yield Walled(app, served, data_dir)
    finally:
        served.close()
        app.extensions["sessions"].shutdown()  # stops the kernels and the head the server started
        store.close()
