"""The seed notebook, unchanged, trains with real TF on Ray through a walled login-mode server (issue 20).

Its kernel runs under a session uid of its own, its actors under the Ray zone's, with the default
limits: the table reaches the actors through the session's hand-off folder, the drivers reach
the raylet through the members group, and the model lands in the lake.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from console.cluster.procs import free_port
from console.server.auth import hash_password
from tests.python_cells.test_seed import PYTHON_ENV, SEED_CELL
from tests.support.live_server import REAL_KERNEL, Served, _pythonpath
from walled_support import PASSWORD, Member, text_of


@pytest.mark.slow
def test_the_seed_notebook_trains_in_walled_sessions(tmp_path: Path) -> None:
    from console.demo.datasets import write_mnist
    from console.server import create_app

    data_dir = tmp_path / "data"
    app = create_app({"DATA_DIR": str(data_dir), "TESTING": True, "SINGLE_USER": False, "RAY_NUM_CPUS": 2,
                      "RAY_CLIENT_PORT": free_port(), "KERNEL_ENV": {"PYTHONPATH": _pythonpath()}},
                     kernel_module=REAL_KERNEL)
    store = app.extensions["store"]
    store.create_user("erin", hash_password(PASSWORD))
    write_mnist(str(data_dir / "lake" / "mnist"), synthetic=True, rows=3000, partitions=2)
    served = Served(app)
    try:
        erin = Member(served.url, "erin")
        runs = erin.run(
            "load parquet.`mnist` as mnist;",
            f'!python env "PYTHON_ENV={PYTHON_ENV}";\n!python conf "runIn=driver";\n'
            '!python conf "schema=file";\n!python conf "dataMode=model";',
            ("python", SEED_CELL),
            "save overwrite mnist_model as delta.`ai_model.mnist_model`;", timeout=600)
        shown = "".join(text_of(r) for r in runs)
        assert [r["status"] for r in runs] == ["done"] * 4, shown[-4000:]
        assert "total workers 2" in shown and re.search(r"Network pid=\d+", shown), shown[-4000:]
        model = data_dir / "lake" / "ai_model" / "mnist_model"
        assert any(model.glob("*.parquet")), list(model.iterdir())
    finally:
        served.close()
        app.extensions["sessions"].shutdown()
        store.close()
