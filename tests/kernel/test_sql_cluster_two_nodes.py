"""SQL on a head plus a joined node (as tests/python_cells/test_two_nodes.py starts them): with
`auto`, a group-by and a join over parquet ten times the session's memory run on both nodes
through Daft, give DuckDB's rows over the same files, and the kernel's memory stays under the
session's limit; the results stay on the cluster as files, which a Python cell's tasks read
themselves (direct reads on two nodes) and which save as one delta version; a second session over
Ray Client (ray://) gets the same rows as the one over the GCS address. Both nodes are stopped by
their PIDs.
"""
from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from console.cluster.head import short_temp_dir, start_head
from console.cluster.procs import free_port, stop_process_group
from console.config import load_config
from console.kernel.catalog import DistributedTable
from console.kernel.session import Session

pytestmark = [pytest.mark.slow, pytest.mark.ray]
pytest.importorskip("daft")

MEMORY = 48 << 20  # the session's memory (CONSOLE_SESSION_MEMORY)
FILES, ROWS = 8, 2_700_000  # 3 int64 columns, no dictionary pages: 8 * 2.7M * 24 B = 518 MB decoded


def _write(folder: Path) -> int:
    folder.mkdir(parents=True)
    rng = np.random.default_rng(7)
    for i in range(FILES):
        ids = np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64)
        table = pa.table({"id": ids, "cat": ids % 50, "amount": rng.integers(0, 1000, ROWS, dtype=np.int64)})
        pq.write_table(table, folder / f"part-{i}.parquet", use_dictionary=False, compression="zstd")
    return FILES * ROWS


def _peak_growth(session: Session, text: str) -> int:
    """Bytes the kernel's resident memory rose to above where it stood, while `text` ran."""
    def status(key: str) -> int:
        line = next(ln for ln in Path("/proc/self/status").read_text().splitlines() if ln.startswith(key))
        return int(line.split()[1]) * 1024

    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    before = status("VmRSS:")
    out = session.run_cell(text)
    assert out.ok, out.error
    return status("VmHWM:") - before


PY_CELL = """--%python
--%input=g_cluster
--%output=py_sum
import ray
import pyarrow as pa
from pyjava.api.mlsql import RayContext

ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
servers = ray_context.data_servers()
assert all(s.pieces is not None for s in servers), "not direct reads"

@ray.remote(num_cpus=1, scheduling_strategy="SPREAD")
def part(server):
    t = RayContext.collect_arrow(server)
    return t.num_rows, sum(t.column("n").to_pylist())

done = ray.get([part.remote(s) for s in servers])
ray_context.build_result(pa.table({"rows": [sum(d[0] for d in done)], "n": [sum(d[1] for d in done)]}))
"""


@pytest.mark.ray_client
def test_big_group_by_and_join_run_on_both_nodes(tmp_path: Path) -> None:
    multi = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}  # Ray's multi-node addressing (eth0, not loopback)
    client_port = free_port()
    head = start_head(short_temp_dir(tmp_path / "head"), num_cpus=1, client_port=client_port, env=multi)
    node = None
    session = None
    try:
        node = start_head(short_temp_dir(tmp_path / "node"), num_cpus=1, address=head.address, env=multi)
        rows = _write(tmp_path / "big")
        cfg = load_config({"DATA_DIR": str(tmp_path / "data"), "RAY_ADDRESS": head.address,
                           "SESSION_MEMORY": "48M", "SANDBOX": "off"})
        session = Session(cfg, session_id="two-nodes")
        ok = session.run_cell(f"load parquet.`{tmp_path / 'big'}` as big;\n"
                              "select id as cat, concat('name', cast(id as string)) as name from range(50) as dims;")
        assert ok.ok, ok.error
        assert session.tables.entry("big").nbytes >= 10 * MEMORY  # type: ignore[union-attr]
        ok = session.run_cell("select cat, count(*) as n from dims group by cat as small;")
        assert ok.ok, ok.error
        assert session._cluster_sql is None  # small inputs in auto: no Ray connection, even on two nodes
        group_by = "select cat, count(*) as n, sum(amount) as s from big group by cat"
        join = ("select d.name, count(*) as n, sum(b.amount) as s from big b join dims d on b.cat = d.cat "
                "group by d.name")
        growth = _peak_growth(session, f"{group_by} as g_cluster;\n{join} as j_cluster;")
        assert session.cluster_sql.connected  # auto chose the cluster: big inputs, two CPU nodes
        assert len(set(session.cluster_sql.worker_nodes)) == 2  # Daft's workers ran on both nodes
        assert growth < MEMORY, f"kernel grew {growth >> 20} MiB"
        # the results stayed on the cluster: parquet files in the session's cache, not rows in the kernel
        assert all(isinstance(session.tables.entry(n), DistributedTable) for n in ("g_cluster", "j_cluster"))
        # DuckDB over the same files (its own connection: 48 MiB is too little for DuckDB's join itself)
        con = duckdb.connect()
        con.execute(f"create view big as select * from read_parquet('{tmp_path / 'big'}/*.parquet')")
        con.register("dims", session.tables["dims"])
        for cluster, sql, key in (("g_cluster", group_by, "cat"), ("j_cluster", join, "name")):
            there = session.tables.entry(cluster).slice().sort_by(key).to_pylist()  # type: ignore[union-attr]
            here = con.sql(sql).to_arrow_table().sort_by(key).to_pylist()
            assert there == here and sum(r["n"] for r in there) == rows
        # a Python cell on a cluster result: each task reads its own row groups of the files in the
        # lake, on whichever node it runs (the files are on storage both nodes see), not the kernel
        session.cluster_sql.close()  # Daft's workers go; the result stays in its files
        ok = session.run_cell(PY_CELL, kind="python", cell="py")
        assert ok.ok, ok.error
        assert session.tables["py_sum"].to_pylist() == [{"rows": 50, "n": rows}]
        assert not session.tables.entry("g_cluster").loaded  # type: ignore[union-attr]
        # save of the cluster's result: one new delta version, readable by deltalake
        ok = session.run_cell("save overwrite g_cluster as delta.`sqlc.g`;")
        assert ok.ok, ok.error
        delta = DeltaTable(str(tmp_path / "data" / "lake" / "sqlc" / "g"))
        assert delta.version() == 0 and delta.to_pyarrow_table().num_rows == 50
        assert not session.tables.entry("g_cluster").loaded  # type: ignore[union-attr]  # written by Daft's workers
        # the other address form, Ray Client: the same rows
        host = head.address.rsplit(":", 1)[0]
        client_cfg = load_config({"DATA_DIR": str(tmp_path / "data2"), "RAY_ADDRESS": f"ray://{host}:{client_port}",
                                  "SANDBOX": "off"})
        other = Session(client_cfg, session_id="ray-client")
        try:
            ok = other.run_cell(f'set sql.engine = "cluster" where type="conf";\n'
                                f"load parquet.`{tmp_path / 'big'}` as big;\n{group_by} as g;")
            assert ok.ok, ok.error
            expected = session.tables["g_cluster"].sort_by("cat").to_pylist()
            assert other.tables["g"].sort_by("cat").to_pylist() == expected
        finally:
            other.shutdown()
    finally:
        if session is not None:
            session.shutdown()
        if node is not None:
            stop_process_group(node.pid, grace=3.0)
        stop_process_group(head.pid, grace=3.0)
