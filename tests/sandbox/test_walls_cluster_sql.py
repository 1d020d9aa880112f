"""SQL on the cluster through a walled login-mode server: the kernel runs under a session uid of
its own, Daft's workers under the Ray zone's. A cluster select's result (a distributed table) is
written by the workers into the lake's hidden folder, which the kernel reads, a later select
composes on it, a Python cell's actors read its files, and it saves as one delta version.
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from walled_support import Walled, text_of

pytest.importorskip("daft")

CELL = """--%python
--%input=per_cat
--%output=py_sum
import ray
import pyarrow as pa
from pyjava.api.mlsql import RayContext

ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
servers = ray_context.data_servers()

@ray.remote
def part(server):
    return sum(RayContext.collect_arrow(server).column("n").to_pylist())

print("direct", all(s.pieces is not None for s in servers))
ray_context.build_result(pa.table({"n": [sum(ray.get([part.remote(s) for s in servers]))]}))
"""


@pytest.mark.slow  # the walled head and a Daft driver start (about a minute here)
def test_a_distributed_table_in_a_walled_session(walled: Walled) -> None:
    lake = walled.data_dir / "lake"
    folder = lake / "walled_events"
    folder.mkdir(parents=True, exist_ok=True)
    rows = 3000
    table = pa.table({"id": list(range(rows)), "category": [f"c{i % 7}" for i in range(rows)]})
    for i in range(2):
        pq.write_table(table.slice(i * rows // 2, rows // 2), folder / f"part-{i}.parquet")
    runs = walled.member().run(
        'load parquet.`walled_events` as ev;\nset sql.engine = "cluster" where type="conf";\n'
        "select category, count(*) as n from ev group by category as per_cat;",
        "select sum(n) as total from per_cat as summed;",
        ("python", CELL),
        "save overwrite per_cat as delta.`walled.per_cat`;", timeout=600)
    shown = "".join(text_of(r) for r in runs)
    assert [r["status"] for r in runs] == ["done"] * 4, shown[-4000:]
    assert '"total"' in shown and str(rows) in json.dumps(runs[1].get("events", [])), shown[-3000:]
    assert "direct True" in shown, shown[-3000:]  # the actors read the result's files themselves
    delta = DeltaTable(str(lake / "walled" / "per_cat"))
    assert delta.version() == 0 and delta.to_pyarrow_table().num_rows == 7
    hidden = lake / ".cluster_sql"
    assert hidden.is_dir() and Path(hidden).stat().st_mode & 0o444 == 0  # nobody lists it
