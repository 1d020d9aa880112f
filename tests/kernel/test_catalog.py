"""The lazy load: a loaded parquet/delta table stays on disk until something needs its rows."""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from console.kernel import results
from console.kernel.catalog import LazyTable
from console.kernel.session import Session


def _rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": list(range(start, start + n)),
                     "name": [f"n{i}" for i in range(start, start + n)],
                     "v": pa.array([[i, i + 1] for i in range(start, start + n)], pa.list_(pa.int64()))})


@pytest.fixture
def folder(session: Session) -> Path:
    """lake/pq: three files, several row groups each (the order a reader must keep)."""
    path = Path(session.cfg.data_dir) / "lake" / "pq"
    path.mkdir(parents=True)
    for i in range(3):
        pq.write_table(_rows(1000, i * 1000), path / f"part-{i}.parquet", row_group_size=300)
    return path


def _eager(folder: Path) -> pa.Table:
    return ds.dataset(sorted(str(p) for p in folder.glob("*.parquet")), format="parquet").to_table()


def _lazy(session: Session, name: str) -> LazyTable:
    entry = session.tables.entry(name)
    assert isinstance(entry, LazyTable), entry
    return entry


def test_load_reads_only_the_footers(session: Session, folder: Path) -> None:
    out = session.run_cell("load parquet.`pq` as t;", cell=1)
    assert out.ok, out.error
    t = _lazy(session, "t")
    assert not t.loaded and t.num_rows == 3000 and t.schema.names == ["id", "name", "v"]
    # the preview is the first rows, decoded on their own
    assert out.result is not None and out.result.total_rows == 3000
    assert [r[0] for r in out.result.rows] == list(range(len(out.result.rows)))
    # SQL scans the files: a projection and a filter, and still nothing in the catalog
    out = session.run_cell("select id, name from t where id % 997 = 0 as hits;")
    assert out.ok, out.error
    assert session.tables["hits"].column("id").to_pylist() == [0, 997, 1994, 2991]
    assert session.run_cell("!show tables;").ok
    assert not t.loaded
    # what wants a whole table gets the very rows an eager read gives, once
    assert session.tables["t"].equals(_eager(folder))
    assert t.loaded


def test_sql_over_the_files_is_sql_over_the_table(session: Session, folder: Path) -> None:
    assert session.run_cell("load parquet.`pq` as t;").ok
    session.tables["eager"] = _eager(folder)
    for sql in ("select * from {t}", "select id, v from {t} where id > 1500", "select count(*) c, sum(id) s from {t}"):
        assert session.run_cell(f"{sql.format(t='t')} as a; {sql.format(t='eager')} as b;").ok
        assert session.tables["a"].equals(session.tables["b"]), sql
    assert not _lazy(session, "t").loaded


def test_slices_and_batches_keep_the_order(session: Session, folder: Path) -> None:
    assert session.run_cell("load parquet.`pq` as t;").ok
    t, eager = _lazy(session, "t"), _eager(folder)
    for offset, length in ((0, 5), (299, 3), (1000, 1000), (2990, 100), (3000, 10)):
        assert t.slice(offset, length).equals(eager.slice(offset, length)), (offset, length)
    assert pa.Table.from_batches(list(t.batches(128)), t.schema).equals(eager)
    assert not t.loaded


def test_streaming_reads_files_ahead_and_stops_with_its_reader(session: Session, folder: Path) -> None:
    import threading

    assert session.run_cell("load parquet.`pq` as t;").ok
    t = _lazy(session, "t")
    # a preview's first rows come from the first file alone (no thread decodes the next ones)
    assert t.slice(0, 10).equals(_eager(folder).slice(0, 10))
    # a stream read partly: the threads decoding the next files stop with the reader
    stream = t.batches(128)
    assert next(stream).num_rows == 128
    assert [th for th in threading.enumerate() if th.name.startswith("read-ahead-")] or os.cpu_count() == 1
    stream.close()  # type: ignore[attr-defined]
    assert not [th for th in threading.enumerate() if th.name.startswith("read-ahead-")]
    # a file whose bytes went bad under the same size and time: its thread's error reaches the reader
    bad = folder / "part-1.parquet"
    st = bad.stat()
    data = bytearray(bad.read_bytes())
    data[8:st.st_size // 2] = b"\xff" * (st.st_size // 2 - 8)
    bad.write_bytes(bytes(data))
    os.utime(bad, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises((OSError, pa.ArrowException)):
        list(t.batches(128))
    assert not [th for th in threading.enumerate() if th.name.startswith("read-ahead-")]


def test_a_page_and_a_download_of_a_loaded_result(session: Session, folder: Path) -> None:
    assert session.run_cell("load parquet.`pq` as t;", cell="c1").ok
    page = session.query("result_page", {"cell": "c1", "offset": 1200, "limit": 3})
    assert [r[0] for r in page["rows"]] == [1200, 1201, 1202] and page["total_rows"] == 3000
    done = results.result_file(session, {"cell": "c1", "format": "parquet", "name": "a" * 32})
    path = results.download_path(session.cache_dir, "a" * 32, "parquet")
    assert done["rows"] == 3000 and pq.read_table(path).equals(_eager(folder))
    results.result_file(session, {"cell": "c1", "format": "csv", "name": "b" * 32})
    lines = results.download_path(session.cache_dir, "b" * 32, "csv").read_text().splitlines()
    assert len(lines) == 3001 and lines[1].startswith("0,")
    assert not _lazy(session, "t").loaded


def test_a_changed_file_is_named_not_mixed_in(session: Session, folder: Path) -> None:
    assert session.run_cell("load parquet.`pq` as t;").ok
    pq.write_table(_rows(5, 10_000), folder / "part-1.parquet")
    out = session.run_cell("select count(*) from t as n;")
    assert not out.ok and out.error is not None
    assert "part-1.parquet of parquet pq changed after the load" in out.error.message
    assert "run the load again" in out.error.message
    os.unlink(folder / "part-2.parquet")
    out = session.run_cell("select * from t as all_rows;")
    assert out.error is not None and "part-1.parquet" in out.error.message  # the first one found
    assert session.run_cell("load parquet.`pq` as t; select count(*) n from t as n;").ok
    assert session.tables["n"].column("n").to_pylist() == [1005]


def test_a_save_over_the_loaded_folder_keeps_the_table(session: Session, folder: Path) -> None:
    out = session.run_cell("""
        load parquet.`pq` as t;
        select id from t where id < 10 as small;
        save overwrite small as parquet.`pq`;
        select count(*) n from t as n;
    """)
    assert out.ok, out.error
    assert session.tables["n"].column("n").to_pylist() == [3000]  # read before the save replaced it
    assert pq.read_table(folder).num_rows == 10


def test_delta_keeps_the_loaded_version(session: Session) -> None:
    from deltalake import write_deltalake

    location = Path(session.cfg.data_dir) / "lake" / "db" / "ev"
    write_deltalake(str(location), _rows(10))
    assert session.run_cell("load delta.`db.ev` as now; load delta.`db.ev` where versionAsOf=\"0\" as v0;").ok
    write_deltalake(str(location), _rows(5, 100), mode="overwrite")
    assert session.run_cell("select count(*) n from now as a; select count(*) n from v0 as b;").ok
    assert session.tables["a"].column("n").to_pylist() == [10] == session.tables["b"].column("n").to_pylist()
    assert session.run_cell("load delta.`db.ev` as later;").ok
    assert session.tables["later"].num_rows == 5
    now = session.tables.entry("now")
    assert isinstance(now, LazyTable) and now.files and all(Path(f).is_file() for f in now.files)
    Path(now.files[0]).unlink()  # as a vacuum would
    out = session.run_cell("select * from now as gone;")
    assert out.error is not None and f"{Path(now.files[0]).name} of delta db.ev was removed" in out.error.message


def test_what_is_still_read_at_once(session: Session, tmp_path: Path) -> None:
    lake = Path(session.cfg.data_dir) / "lake"
    (lake / "hive" / "team=a").mkdir(parents=True)
    pq.write_table(_rows(3), lake / "hive" / "team=a" / "x.parquet")
    (lake / "c.csv").write_text("a,b\n1,2\n")
    assert session.run_cell("load parquet.`hive` as h; load csv.`c.csv` as c;").ok
    assert not isinstance(session.tables.entry("h"), LazyTable)  # typed partition values need the data
    assert not isinstance(session.tables.entry("c"), LazyTable)
    assert session.tables["h"].column("team").to_pylist() == ["a"] * 3


def test_a_bad_file_fails_the_load(session: Session) -> None:
    lake = Path(session.cfg.data_dir) / "lake"
    (lake / "bad").mkdir(parents=True)
    pq.write_table(_rows(3), lake / "bad" / "a.parquet")
    (lake / "bad" / "b.parquet").write_bytes(b"not parquet at all")
    out = session.run_cell("load parquet.`bad` as t;")
    assert not out.ok and out.error is not None and out.error.kind == "data"
    assert "cannot read parquet from bad" in out.error.message


def test_a_partitioned_delta_table_reads_as_the_eager_read(session: Session) -> None:
    from deltalake import write_deltalake

    from console.sources import get_source

    rows = _rows(12).append_column("team", pa.array(["a b", "c", "d/e"] * 4))
    write_deltalake(str(Path(session.cfg.data_dir) / "lake" / "db" / "teams"), rows, partition_by=["team"])
    assert session.run_cell("load delta.`db.teams` as t;").ok
    assert isinstance(session.tables.entry("t"), LazyTable)
    eager = get_source("delta").read(session.source_context(), "db.teams", {})
    assert session.run_cell("select * from t as s;").ok
    assert session.tables["s"].sort_by("id").equals(eager.sort_by("id"))
    assert session.tables["t"].equals(eager)


def test_a_page_of_a_result_whose_files_went_says_so(session: Session, folder: Path) -> None:
    assert session.run_cell("load parquet.`pq` as t;", cell="c1").ok
    os.unlink(folder / "part-0.parquet")
    with pytest.raises(LookupError, match="part-0.parquet of parquet pq was removed after the load"):
        session.query("result_page", {"cell": "c1", "offset": 0, "limit": 3})


def test_decoded_size_of_dictionary_encoded_numbers(tmp_path: Path) -> None:
    """The footers' page sizes of a dictionary-encoded int column are a fraction of its Arrow
    size; the estimate (what auto compares with sql.clusterBytes) counts rows x width."""
    import numpy as np

    table = pa.table({"k": np.arange(200_000) % 10, "x": np.arange(200_000, dtype=np.float64)})
    pq.write_table(table, tmp_path / "a.parquet")
    assert LazyTable(ds.dataset(tmp_path / "a.parquet"), "t").nbytes >= table.nbytes
