"""SQL on the cluster: selects run by Daft on the session's Ray head (the test session's one
head; `sql.engine = "cluster"` forces it there, as auto would on two nodes), the engine setting,
and what stays local. The two-node run with more data than the kernel's memory is in
tests/kernel/test_sql_cluster_two_nodes.py (slow); distributed results in
tests/kernel/test_sql_cluster_distributed.py.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from console.kernel.session import Session

pytest.importorskip("daft")


def _events(n: int = 3000) -> pa.Table:
    return pa.table({"id": pa.array(range(n), pa.int64()),
                     "category": [f"c{i % 7}" for i in range(n)],
                     "amount": [float(i % 101) + 0.9 for i in range(n)],
                     "ts": pa.array([1_700_000_000 + 3_600 * i for i in range(n)], pa.int64())})


def _write(folder: Path, table: pa.Table, files: int = 3) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    step = -(-table.num_rows // files)
    for i in range(files):
        pq.write_table(table.slice(i * step, step), folder / f"part-{i}.parquet")
    return folder


@pytest.fixture(autouse=True)
def _lake_reachable(ray_session: Session) -> None:
    """Daft's workers read the lake by path on their nodes, as the head's own uid: pytest makes its
    folders 0700, which only this test's uid may enter (a real data dir is 0755 above the lake)."""
    data_dir = Path(ray_session.cfg.DATA_DIR).resolve()
    for folder in (data_dir, data_dir.parent):
        folder.chmod(0o755)


def ok(session: Session, text: str) -> None:
    out = session.run_cell(text)
    assert out.ok, out.error


def error(session: Session, text: str) -> str:
    out = session.run_cell(text)
    assert not out.ok
    assert out.error is not None
    return out.error.message


def test_cluster_select_gives_duckdbs_rows(ray_session: Session, tmp_path: Path) -> None:
    s = ray_session
    folder = _write(s.source_context().lake / "events", _events())  # where every node (and the sandbox) sees it
    query = ("select category, count(*) as n, sum(cast(amount as int)) as s, "
             "max(date_format(from_unixtime(ts), 'yyyy-MM')) as last_month from ev group by category")
    ok(s, f"load parquet.`{folder}` as ev;\n{query} as here;")
    ok(s, f'set sql.engine = "cluster" where type="conf";\n{query} as there;')
    assert s.cluster_sql.connected
    assert s.tables["there"].sort_by("category").to_pylist() == s.tables["here"].sort_by("category").to_pylist()
    # a join with an in-memory table (the DuckDB result above), and a sort on a window alias
    ok(s, "select e.id, h.n, row_number() over (order by e.amount desc, e.id) as rn from ev e "
          "join here h on e.category = h.category order by rn limit 5 as top;")
    assert s.tables["top"].column("rn").to_pylist() == [1, 2, 3, 4, 5]
    assert s.tables["top"].column("id").to_pylist()[:2] == [100, 201]



def test_an_idle_driver_stops(ray_session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    from console.kernel.sqlengines import cluster

    monkeypatch.setattr(cluster, "IDLE_SECONDS", 1.0)
    s = ray_session
    ok(s, 'set sql.engine = "cluster" where type="conf";\nselect 1 as one as o;')
    assert s.cluster_sql.connected
    deadline = time.monotonic() + 10
    while s.cluster_sql.connected and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not s.cluster_sql.connected  # Daft's workers of this session are gone with its Ray job
    ok(s, "select 2 as two as t;")  # and the next statement starts it again
    assert s.tables["t"].column("two").to_pylist() == [2]


def test_cluster_refusal_names_the_construct_and_the_setting(ray_session: Session, tmp_path: Path) -> None:
    s = ray_session
    ok(s, "select 1 as id, 'a' as k as t1;")  # local: the refusals below need no driver
    ok(s, 'set sql.engine = "cluster" where type="conf";')
    message = error(s, "select k, nth_value(k, 2) over (order by id) as n from t1 as t2;")
    assert "nth_value() is not supported on the cluster" in message and 'sql.engine = "local"' in message
    message = error(s, "select k, sum(id) over (order by id) as n from t1 as t2;")  # Daft: the whole partition's
    assert "default frame" in message and 'sql.engine = "local"' in message
    message = error(s, "select * from read_parquet('/etc') as t3;")
    assert "read_parquet" in message
    ok(s, "select k, ntile(2) over (order by id) as n from t1 as t2;")  # said with row_number() on the cluster
    assert s.tables["t2"].column("n").to_pylist() == [1]
    ok(s, 'set sql.engine = "local" where type="conf";\n'
          "select k, nth_value(k, 2) over (order by id) as n from t1 as t2;")


def test_what_daft_lacks_runs_on_the_cluster_in_duckdb(ray_session: Session) -> None:
    """An aggregate Daft lacks (collect_list), a function it lacks (levenshtein) and a cast: DuckDB
    computes them inside Daft's workers (daft_udf.py, pickled by value into them)."""
    s = ray_session
    ok(s, "select 1 as id, 'a' as k, 2.7 as v union all select 2, 'a', 3.2 union all select 3, 'b', NULL as t4;")
    ok(s, 'set sql.engine = "cluster" where type="conf";\n'
          "select k, sort_array(collect_list(id)) as ids, levenshtein(k, 'b') as d, sum(cast(v as int)) as s "
          "from t4 group by k order by k as t5;")
    assert s.tables["t5"].to_pylist() == [{"k": "a", "ids": [1, 2], "d": 1, "s": 5},
                                          {"k": "b", "ids": [3], "d": 0, "s": None}]


@pytest.mark.slow  # two driver starts (about 20 s here)
def test_interrupt_cancels_the_cluster_query(ray_session: Session, tmp_path: Path) -> None:
    s = ray_session
    folder = _write(s.source_context().lake / "big", _events(200_000), files=4)
    ok(s, f'load parquet.`{folder}` as big;\nset sql.engine = "cluster" where type="conf";')
    ok(s, "select count(*) as n from big as warm;")  # the driver is up: the interrupt meets a query
    # A self-join of 200,000 rows on 7 keys (5.7 billion pairs): it ends only by the interrupt.
    timer = threading.Timer(1.5, s.interrupt)
    timer.start()
    out = s.run_cell("select a.category, count(*) as n from big a join big b on a.category = b.category "
                     "group by a.category as slow;")
    timer.join()
    assert not out.ok and out.error is not None and out.error.kind == "interrupted", out.error
    assert not s.cluster_sql.connected  # the driver, and its Ray job with the query's tasks, are gone
    ok(s, "select count(*) as n from big as again;")  # the next statement starts a new driver
    assert s.tables["again"].column("n").to_pylist() == [200_000]
    # nothing of the cancelled query's job is left on the cluster: only this driver's job has Daft actors
    for _ in range(20):
        if len(s.cluster_sql.daft_actors) == 1:
            break
        time.sleep(0.5)
        ok(s, "select count(*) as n from big as again;")
    assert len(s.cluster_sql.daft_actors) == 1, s.cluster_sql.daft_actors


def test_an_interrupt_before_the_query_reaches_the_driver_is_kept_for_the_cell(ray_session: Session) -> None:
    """An interrupt that lands while a cluster statement is still being translated (no query asks
    the driver yet) stops that statement when it asks, not after it ran: it used to be cleared when
    the query began. It costs the warm driver nothing, and the next cell runs."""
    from console.kernel.errors import CellError

    s = ray_session
    ok(s, 'select 1 as a as one;\nset sql.engine = "cluster" where type="conf";\nselect a from one as warm;')
    assert s.cluster_sql.connected
    s.interrupt()  # between statements: nothing is asking the driver
    assert s.cluster_sql.connected  # the idle driver is kept
    with pytest.raises(CellError) as stopped:  # the statement the interrupt landed in, as the router calls it
        s.cluster_sql.query("SELECT a FROM one", ("one",), s.tables, False, 1, 1)
    assert stopped.value.kind == "interrupted", stopped.value
    ok(s, "select a + 1 as b from one as after;")  # a new cell: the interrupt is spent
    assert s.tables["after"].to_pylist() == [{"b": 2}]


def test_auto_with_small_inputs_never_connects(ray_session: Session, tmp_path: Path) -> None:
    s = ray_session
    folder = _write(s.source_context().lake / "small", _events(100))
    ok(s, f'set sql.engine = "auto" where type="conf";\nset sql.clusterBytes = "1" where type="conf";\n'
          f"load parquet.`{folder}` as small;\nselect count(*) as n from small as c;")
    # big by the setting, but the embedded head is one node: auto stays local, with no Ray connection
    assert s.tables["c"].column("n").to_pylist() == [100]
    assert s._cluster_sql is None or not s._cluster_sql.connected


def test_engine_setting_is_checked(ray_session: Session) -> None:
    assert "sql.engine must be one of auto, local, cluster" in error(
        ray_session, 'set sql.engine = "spark" where type="conf";')
    assert "sql.clusterBytes must be a number" in error(ray_session, 'set sql.clusterBytes = "lots" where type="conf";')


# Holds every CPU free at its start (whole ones, then the fraction an earlier test's actor left):
# a fixed count could wait forever on a head where something else still holds part of one.
_HOLD_CPUS = """
import sys, time, ray
ray.init(address=sys.argv[1], logging_level="ERROR")
@ray.remote
class Hold:
    def ready(self):
        return True
free = ray.available_resources().get("CPU", 0)
sizes = [1.0] * int(free) + ([round(free - int(free), 4)] if free - int(free) >= 0.0001 else [])
holders = [Hold.options(num_cpus=n).remote() for n in sizes]
ray.get([h.ready.remote() for h in holders], timeout=120)
print("held", flush=True)
time.sleep(600)
"""


@pytest.mark.slow  # waits out the 10 s for a free CPU
def test_a_sort_with_every_cpu_held_fails_fast_instead_of_hanging(ray_session: Session) -> None:
    """Daft's sort samples in a task that needs a free CPU: with other jobs' actors holding all of
    them it would wait forever. It waits briefly, then fails saying why."""
    import os
    import select
    import subprocess
    import sys

    from console.cluster.head import RAY_ENV, RayCluster

    s = ray_session
    folder = _write(s.source_context().lake / "sorted", _events(1000))
    ok(s, f'load parquet.`{folder}` as so;\nset sql.engine = "cluster" where type="conf";\n'
          "select count(*) as n from so as warm;")
    info = RayCluster(s.cfg).ensure()
    env = {**os.environ, **RAY_ENV}
    token = getattr(info, "auth_token", None)
    if token:
        env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token})
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_CPUS, info.address], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert holder.stdout is not None
        ready, _, _ = select.select([holder.stdout], [], [], 150)
        assert ready and holder.stdout.readline().strip() == b"held", "the holder did not take the free CPUs"
        # The holder keeps the CPUs until it is killed below: a query that waited for them
        # would never come back, so an answer at all is the refusal not waiting.
        message = error(s, "select id from so order by amount desc, id limit 3 as top;")
        assert "no free CPU" in message and 'sql.engine = "local"' in message
    finally:
        holder.kill()
        holder.wait()
    for _ in range(3):  # the holder's job ends (Ray notices within seconds) and its CPUs come back
        if s.run_cell("select id from so order by amount desc, id limit 3 as top;").ok:
            break
    else:
        pytest.fail("the sort did not run once the CPUs were free")
    assert s.tables["top"].column("id").to_pylist() == [100, 201, 302]


@pytest.mark.slow  # every parity snippet through the cluster path (about 20 s)
def test_spark_parity_snippets_on_ray(ray_session: Session) -> None:
    """The goldens on Daft's Ray runner, through the whole cluster path (the parity tests run the
    same translation on Daft's local runner): the same answers, the same refusals."""
    from tests.kernel.spark_parity.compare import answer
    from tests.kernel.test_sql_daft_parity import GOLDENS, REFUSED
    from tests.kernel.spark_parity.snippets import SNIPPETS
    from tests.kernel.test_sql_spark_parity import parity_table

    s = ray_session
    folder = _write(s.source_context().lake / "parity", parity_table(), files=2)
    ok(s, f'load parquet.`{folder}` as t;\nset sql.engine = "cluster" where type="conf";')
    for name, sql, ordered in SNIPPETS:
        out = s.run_cell(f"{sql} as r;")
        if name in REFUSED:
            assert not out.ok and out.error is not None and REFUSED[name] in out.error.message, name
            continue
        assert out.ok, (name, out.error)
        result = s.tables["r"]
        got = answer(result.column_names, [list(r.values()) for r in result.to_pylist()], ordered)
        assert got == GOLDENS[name], name


def test_a_partitioned_delta_input_is_read_on_the_cluster(ray_session: Session) -> None:
    """A delta table partitioned by a string and an int column: Daft reads its files, the partition
    values come from the table's log (not the files), and the kernel never reads the rows."""
    s = ray_session
    events = _events(2000).append_column("day", pa.array([i % 3 for i in range(2000)], pa.int32()))
    s.tables["raw"] = events
    ok(s, 'set sql.engine = "local" where type="conf";\n'
          "save overwrite raw as delta.`parts.events` partitionBy category, day;\n"
          "load delta.`parts.events` as ev;")
    query = "select category, day, count(*) as n, sum(amount) as s from ev where day > 0 group by category, day"
    ok(s, f"{query} as here;")
    assert not s.tables.entry("ev").loaded  # DuckDB scanned the files
    ok(s, f'set sql.engine = "cluster" where type="conf";\n{query} as there;')
    assert not s.tables.entry("ev").loaded, "the kernel read the partitioned table instead of the cluster"
    order = ["category", "day"]
    there = s.tables["there"].sort_by([(c, "ascending") for c in order]).to_pylist()
    here = s.tables["here"].sort_by([(c, "ascending") for c in order]).to_pylist()
    assert len(here) == 14 and [{**r, "s": round(r["s"], 6)} for r in there] == \
        [{**r, "s": round(r["s"], 6)} for r in here]
    ok(s, 'set sql.engine = "auto" where type="conf";')
