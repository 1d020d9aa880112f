"""A cluster select's result stays on the cluster (catalog.DistributedTable): parquet files Daft's
workers wrote into the lake's hidden folder of the kernel. Later selects compose on the cluster, the preview
reads its first rows, `save` writes from the cluster (one delta commit), a Python cell's actors
read its files, and a local statement that needs more of it than CONSOLE_RESULT_KEEP_BYTES fails
with "save it first". Real Ray (the test session's head) and real Daft, as tests/kernel/test_sql_cluster.py.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from console.config import load_config
from console.kernel.catalog import DistributedTable
from console.kernel.session import Session

pytest.importorskip("daft")

KEEP_BYTES = 64 * 1024  # CONSOLE_RESULT_KEEP_BYTES of these sessions: the 20k-row results are bigger


@pytest.fixture
def session(ray_head: Any) -> Iterator[Session]:
    data_dir = Path(ray_head.data_dir).resolve()
    for folder in (data_dir, data_dir.parent):  # as test_sql_cluster.py: the head's uid reads the lake
        folder.chmod(0o755)
    events: list[Any] = []
    s = Session(load_config({**dict(ray_head.cfg), "RESULT_KEEP_BYTES": KEEP_BYTES}), events.append,
                session_id=f"dist-{uuid.uuid4().hex[:8]}")
    s.events = events  # type: ignore[attr-defined]
    yield s
    s.shutdown()


def _load(s: Session, rows: int = 20_000) -> str:
    name = f"ev_{uuid.uuid4().hex[:8]}"
    folder = s.source_context().lake / name
    folder.mkdir(parents=True)
    table = pa.table({"id": pa.array(range(rows), pa.int64()), "category": [f"c{i % 7}" for i in range(rows)],
                      "amount": [float(i % 101) for i in range(rows)]})
    for i in range(2):
        pq.write_table(table.slice(i * rows // 2, rows // 2), folder / f"part-{i}.parquet")
    ok(s, f'load parquet.`{folder}` as ev;\nset sql.engine = "cluster" where type="conf";')
    return name


def ok(s: Session, text: str, **kw: Any) -> Any:
    out = s.run_cell(text, **kw)
    assert out.ok, out.error
    return out


def error(s: Session, text: str) -> str:
    out = s.run_cell(text)
    assert not out.ok and out.error is not None
    return str(out.error.message)


def _distributed(s: Session, name: str) -> DistributedTable:
    entry = s.tables.entry(name)
    assert isinstance(entry, DistributedTable), type(entry)
    assert not entry.loaded  # the kernel never read its rows into an Arrow table
    return entry


def test_a_select_on_a_cluster_result_composes_on_the_cluster(session: Session) -> None:
    s = session
    _load(s)
    out = ok(s, "select id, category, amount * 2 as doubled from ev where amount > 50 order by id desc as big;",
             cell="c1")
    big = _distributed(s, "big")
    assert big.num_rows == sum(1 for i in range(20_000) if i % 101 > 50)
    hidden = s.source_context().lake / ".cluster_sql"  # the lake's hidden folder for results
    assert all(Path(f).is_relative_to(hidden) for f in big.files)
    # the preview: the first rows only, in the select's order
    assert out.result.total_rows == big.num_rows and len(out.result.rows) == int(s.cfg.RESULT_ROWS)
    assert out.result.rows[0][0] == max(i for i in range(20_000) if i % 101 > 50) and not big.loaded
    out = ok(s, "select category, count(*) as n, sum(doubled) as s from big group by category as per_cat;")
    per_cat = _distributed(s, "per_cat")
    assert not big.loaded  # its files went to Daft's workers by name
    ok(s, 'set sql.engine = "local" where type="conf";\n'
          "select category, count(*) as n, sum(amount * 2) as s from ev where amount > 50 group by category as here;")
    ok(s, "select sum(n) as rows from per_cat as summed;")  # DuckDB scans a small one's files (within the limit)
    assert s.tables["summed"].column("rows").to_pylist() == [big.num_rows] and not per_cat.loaded
    assert per_cat.table().sort_by("category").to_pylist() == s.tables["here"].sort_by("category").to_pylist()
    # auto sends a select on a distributed input to the cluster (one node, and small: it would stay local)
    ok(s, 'set sql.engine = "auto" where type="conf";\nselect count(*) as n from big as counted;')
    assert _distributed(s, "counted").table().column("n").to_pylist() == [big.num_rows]


def test_save_as_delta_is_one_commit_from_the_cluster(session: Session) -> None:
    from deltalake import DeltaTable

    s = session
    name = _load(s)
    ok(s, "select id, category from ev where id % 2 = 0 as evens;")
    evens = _distributed(s, "evens")
    target = s.source_context().lake / name / "evens_delta"
    ok(s, f"save overwrite evens as delta.`{target}`;")
    assert not evens.loaded
    table = DeltaTable(str(target))
    assert table.version() == 0
    assert table.to_pyarrow_table().sort_by("id").column("id").to_pylist() == list(range(0, 20_000, 2))
    ok(s, f"save append evens as delta.`{target}`;")
    table = DeltaTable(str(target))
    assert table.version() == 1 and len(table.history()) == 2  # one new version per save
    assert table.to_pyarrow_table().num_rows == 20_000
    ok(s, f"save overwrite evens as delta.`{target}`;")
    assert DeltaTable(str(target)).version() == 2 and DeltaTable(str(target)).to_pyarrow_table().num_rows == 10_000
    # the modes and the schema check of the kernel's delta saves hold; a refused save leaves no file behind
    files_before = sorted(target.glob("*.parquet"))
    assert "exists" in error(s, f"save errorIfExists evens as delta.`{target}`;")
    ok(s, "select id from ev as only_ids;")
    assert "mergeSchema" in error(s, f"save append only_ids as delta.`{target}`;")
    assert DeltaTable(str(target)).version() == 2 and sorted(target.glob("*.parquet")) == files_before
    # parquet: a folder whose files, listed by name, keep the result's order
    ok(s, "select id from ev order by id desc as desc_ids;")
    ok(s, f"save overwrite desc_ids as parquet.`{name}/desc`;\nload parquet.`{name}/desc` as back;")
    assert s.tables["back"].column("id").to_pylist() == list(range(19_999, -1, -1))
    assert "save it first" not in str(s.events)


CELL = """--%python
--%input=small_ids
--%output=py_out
import ray
import pyarrow as pa
from pyjava.api.mlsql import RayContext

ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
servers = ray_context.data_servers()

@ray.remote
def part(server):
    t = RayContext.collect_arrow(server)
    return t.num_rows, sum(t.column("id").to_pylist())

done = ray.get([part.remote(s) for s in servers])
print("direct", all(s.pieces is not None for s in servers))
ray_context.build_result(pa.table({"n": [sum(d[0] for d in done)], "s": [sum(d[1] for d in done)]}))
"""


def test_a_python_cell_reads_the_files_not_the_kernel(session: Session) -> None:
    s = session
    _load(s)
    ok(s, "select id, amount from ev where id < 5000 as small_ids;")
    entry = _distributed(s, "small_ids")
    ok(s, CELL, kind="python", cell="py")
    assert s.tables["py_out"].to_pylist() == [{"n": 5000, "s": sum(range(5000))}]
    printed = "".join(e.text for e in s.events if e.type == "output")  # type: ignore[attr-defined]
    assert "direct True" in printed, printed  # each actor read its own row groups of the files
    assert not entry.loaded  # the worker read the row groups; the kernel decoded nothing


def test_rows_beyond_the_keep_limit_need_a_save_first(session: Session) -> None:
    s = session
    name = _load(s)
    ok(s, "select id, category, amount from ev as wide;", cell="w")
    wide = _distributed(s, "wide")
    assert wide.nbytes > KEEP_BYTES
    message = error(s, 'set sql.engine = "local" where type="conf";\nselect count(*) as n from wide as c;')
    assert "wide is a distributed table" in message and "CONSOLE_RESULT_KEEP_BYTES" in message
    assert "Save it first" in message and not wide.loaded
    with pytest.raises(LookupError, match="Save it first"):  # a sort of the whole result, for paging
        s.query("result_page", {"cell": "w", "offset": 0, "limit": 10, "sort": [["amount", "desc"]]})
    with pytest.raises(LookupError, match="Save it first"):  # a download of all of it
        s.query("result_file", {"cell": "w", "format": "csv", "name": uuid.uuid4().hex})
    page = s.query("result_page", {"cell": "w", "offset": 0, "limit": 10})  # the first page needs no more
    assert [r[0] for r in page["rows"]] == list(range(10))
    # the driver stopping (idle, interrupt) takes nothing: the files hold the result
    s.cluster_sql.close()
    ok(s, f'set sql.engine = "cluster" where type="conf";\nsave overwrite wide as parquet.`{name}/wide`;')
    ok(s, f"load parquet.`{name}/wide` as back;\nselect count(*) as n from back as c;")
    assert _distributed(s, "c").table().column("n").to_pylist() == [20_000]
    results = Path(wide.files[0]).parents[1]
    s.shutdown()  # the kernel ends: its results' files go with it
    assert not results.exists()


def test_partitioned_saves_from_the_cluster(session: Session) -> None:
    from deltalake import DeltaTable

    s = session
    name = _load(s)
    ok(s, "select id, case when id % 5 = 0 then null else concat(category, ' x') end as k, amount from ev as parts;")
    parts = _distributed(s, "parts")
    expected = sorted((i, None if i % 5 == 0 else f"c{i % 7} x") for i in range(20_000))
    target = s.source_context().lake / name / "parts_delta"
    ok(s, f"save overwrite parts as delta.`{target}` partitionBy k;")
    table = DeltaTable(str(target))
    assert table.version() == 0 and table.metadata().partition_columns == ["k"]
    got = table.to_pyarrow_table()
    assert sorted(zip(got.column("id").to_pylist(), got.column("k").to_pylist(), strict=True)) == expected
    ok(s, f"save append parts as delta.`{target}` partitionBy k;")
    assert DeltaTable(str(target)).version() == 1 and DeltaTable(str(target)).to_pyarrow_table().num_rows == 40_000
    assert "partitioned by [k]" in error(s, f"save append parts as delta.`{target}`;")
    ok(s, f"save overwrite parts as parquet.`{name}/parts_pq` partitionBy k;\nload parquet.`{name}/parts_pq` as back;")
    back = s.tables["back"]
    assert sorted(zip(back.column("id").to_pylist(), back.column("k").to_pylist(), strict=True)) == expected
    assert not parts.loaded
