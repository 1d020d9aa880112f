"""Direct reads: actors read a loaded parquet/delta table's row groups and get the kernel path's rows."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from console.actors import data, fragments
from console.kernel.origins import record_load
from console.sources import SourceContext, get_source


def _table(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 255, (n, 4))
    return pa.table({"id": np.arange(n) + seed * 1000,
                     "name": [f"r{seed}-{i}" for i in range(n)],
                     "v": pa.array(list(values), pa.list_(pa.int64()))})


def _parts_from_origin(ctx: SourceContext, fmt: str, path: str, options: dict[str, str],
                       n: int) -> tuple[pa.Table, list[pa.Table]]:
    table = get_source(fmt).read(ctx, path, options)
    origin = record_load(ctx, fmt, path, options, table)
    assert origin is not None, f"{fmt} {path} {options} not recorded"
    frags = fragments.parse(origin.conf_value(table))
    assert frags is not None
    return table, [fragments.read_pieces(p, frags.schema) for p in frags.split(n)]


def test_parquet_row_groups_split_like_the_table(tmp_path: Path) -> None:
    ctx = SourceContext(tmp_path)
    folder = tmp_path / "lake" / "pq"
    folder.mkdir(parents=True)
    pq.write_table(_table(23, 0), folder / "a.parquet", row_group_size=5)  # 5 row groups
    pq.write_table(_table(11, 1), folder / "b.parquet", row_group_size=4)
    for n in (1, 2, 3, 7, 40):
        table, parts = _parts_from_origin(ctx, "parquet", "pq", {}, n)
        expected = data.split(table, n)
        assert [p.num_rows for p in parts] == [p.num_rows for p in expected]
        for got, want in zip(parts, expected, strict=True):
            assert got.equals(want), n


def test_delta_fragments_at_the_loaded_version(tmp_path: Path) -> None:
    from deltalake import write_deltalake

    ctx = SourceContext(tmp_path)
    location = tmp_path / "lake" / "default" / "events"
    location.parent.mkdir(parents=True)
    write_deltalake(str(location), _table(12, 0))
    write_deltalake(str(location), _table(7, 1), mode="append")
    write_deltalake(str(location), _table(5, 2), mode="overwrite")  # version 2
    for options, rows in (({}, 5), ({"versionAsOf": "1"}, 19), ({"versionAsOf": "0"}, 12)):
        table, parts = _parts_from_origin(ctx, "delta", "events", options, 2)
        assert table.num_rows == rows
        got = pa.concat_tables(parts).sort_by("id")
        assert got.equals(table.sort_by("id")), options
    # a later write does not move a recorded load: its files are the loaded version's
    table = get_source("delta").read(ctx, "events", {"versionAsOf": "1"})
    origin = record_load(ctx, "delta", "events", {"versionAsOf": "1"}, table)
    assert origin is not None and origin.version == 1
    write_deltalake(str(location), _table(3, 3), mode="append")
    frags = fragments.parse(origin.conf_value(table))
    assert frags is not None and frags.read_all().sort_by("id").equals(table.sort_by("id"))
    # a version range is a union with a version column: not files; another table object: not this load
    ranged = get_source("delta").read(ctx, "events", {"startingVersion": "0", "endingVersion": "2"})
    assert record_load(ctx, "delta", "events", {"startingVersion": "0", "endingVersion": "2"}, ranged) is None
    assert origin.conf_value(table.slice(0)) is None


def test_partitioned_folders_are_not_recorded(tmp_path: Path) -> None:
    ctx = SourceContext(tmp_path)
    for key in ("a", "b"):
        folder = tmp_path / "lake" / "hive" / f"k={key}"
        folder.mkdir(parents=True)
        pq.write_table(_table(4), folder / "p.parquet")
    table = get_source("parquet").read(ctx, "hive", {})
    assert "k" in table.column_names and record_load(ctx, "parquet", "hive", {}, table) is None


def test_a_vanished_file_names_itself(tmp_path: Path) -> None:
    frags = fragments.Fragments(_table(1).schema, [(str(tmp_path / "gone.parquet"), 0, 3)], "parquet gone")
    with pytest.raises(FileNotFoundError, match="gone.parquet is gone"):
        fragments.read_pieces(frags.split(1)[0], frags.schema, frags.source)


# ---- through the engine, on the real runtime and Ray: actors read their own partitions

CELL = """--%python
--%input={input}
--%output={output}
{direct}

import ray
import pyarrow as pa
from pyjava.api.mlsql import RayContext

ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
servers = ray_context.data_servers()

@ray.remote
def partition(i, server):
    t = RayContext.collect_arrow(server)
    return t.append_column("part", pa.array([i] * t.num_rows, pa.int64()))

tables = ray.get([partition.remote(i, s) for i, s in enumerate(servers)])
print("direct", all(s.pieces is not None for s in servers), len(servers))
{extra}
ray_context.build_result(pa.concat_tables(tables))
"""


@pytest.fixture
def session(ray_cfg: Any) -> Iterator[Any]:
    from console.config import load_config
    from console.kernel.session import Session

    events: list[Any] = []
    s = Session(load_config(dict(ray_cfg)), events.append, session_id="direct-read")
    s.events = events  # type: ignore[attr-defined]
    yield s
    s.shutdown()


def _run(session: Any, source: str, output: str, extra: str = "", direct: str = "") -> tuple[pa.Table, str]:
    session.events.clear()
    cell = CELL.format(input=source, output=output, extra=extra, direct=direct)
    out = session.run_cell(cell, kind="python", cell=3)
    assert out.ok, out.error
    text = "".join(e.text for e in session.events if e.type == "output")
    return session.tables[output], text


def test_actors_read_the_files_and_see_the_kernel_paths_rows(session: Any) -> None:
    from deltalake import write_deltalake

    lake = Path(session.cfg.data_dir) / "lake"
    name = f"direct_{uuid.uuid4().hex[:8]}"
    (lake / name).mkdir(parents=True)
    pq.write_table(_table(300, 0), lake / name / "a.parquet", row_group_size=70)
    pq.write_table(_table(200, 1), lake / name / "b.parquet", row_group_size=90)
    delta = f"{name}_delta"
    write_deltalake(str(lake / "default" / delta), _table(150, 2))
    write_deltalake(str(lake / "default" / delta), _table(90, 3), mode="append")
    write_deltalake(str(lake / "default" / delta), _table(10, 4), mode="overwrite")
    loads = [f"load parquet.`{name}` as t;",
             f"load delta.`{delta}` where versionAsOf=\"1\" as t;",
             f"load delta.`{delta}` as t;"]
    for i, load in enumerate(loads):
        assert session.run_cell(load).ok
        # pyjava's to_dataset: a Ray Dataset of the same partitions (checked once: Ray Data is slow to start)
        extra = 'print("dataset rows", ray_context.to_dataset().count())' if i == 0 else ""
        # The default for a loaded input; later rounds say so, since a --%key stays as !python conf.
        direct, text = _run(session, "t", "direct_out", extra, direct="" if i == 0 else "--%directRead=auto")
        assert "direct True" in text, (load, text)
        if i == 0:
            assert "dataset rows 500\n" in text, text
        streamed, text = _run(session, "t", "streamed_out", direct="--%directRead=false")
        assert "direct False" in text, (load, text)  # the kernel streams the files into its IPC file
        assert not session.tables.entry("t").loaded  # … without reading the table into memory
        assert streamed.equals(direct), load
        assert session.run_cell("select * from t as copied;").ok  # a select: the kernel's own copy
        kernel, text = _run(session, "copied", "kernel_out")
        assert "direct False" in text, (load, text)
        assert direct.num_rows == session.tables["t"].num_rows
        assert direct.equals(kernel), load  # same rows, same partitions, same order


def test_read_params_once_is_the_jobs_conf() -> None:
    from console.worker.context import PythonContext

    ctx = PythonContext("", [], {"tempDataLocalPath": "/lake/x", fragments.FRAGMENTS_KEY: ""})
    assert ctx.read_params_once() == {"tempDataLocalPath": "/lake/x"}  # the internal key is not the cell's


def test_files_only_this_kernel_sees_are_not_recorded(tmp_path: Path) -> None:
    # the kernel's private /tmp (outside its data dir and data roots) is not the actors' /tmp
    ctx = SourceContext(tmp_path / "data")
    (tmp_path / "data" / "lake").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    pq.write_table(_table(5), tmp_path / "elsewhere" / "x.parquet")
    table = get_source("parquet").read(ctx, str(tmp_path / "elsewhere"), {})
    assert record_load(ctx, "parquet", str(tmp_path / "elsewhere"), {}, table) is None
    roots = SourceContext(tmp_path / "data", data_roots=[tmp_path / "elsewhere"])  # bound into the head
    assert record_load(roots, "parquet", str(tmp_path / "elsewhere"), {}, table) is not None
