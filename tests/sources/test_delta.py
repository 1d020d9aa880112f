"""delta: lake names and paths, save modes, time travel, version ranges, schema errors."""
from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from console.sources import SourceContext, SourceError, get_source


@pytest.fixture
def delta():
    return get_source("delta")


def test_lake_name_lives_under_data_dir(ctx: SourceContext, delta, people: pa.Table, rows) -> None:
    delta.write(ctx, people, "ai_model.counts", "overwrite", {}, [])
    assert DeltaTable.is_deltatable(str(ctx.data_dir / "lake" / "ai_model" / "counts"))
    assert rows(delta.read(ctx, "ai_model.counts", {})) == rows(people)
    delta.write(ctx, people, "plain", "overwrite", {}, [])
    assert (ctx.data_dir / "lake" / "default" / "plain" / "_delta_log").is_dir()


def test_name_with_slash_is_a_path(ctx: SourceContext, delta, people: pa.Table, tmp_path: Path) -> None:
    delta.write(ctx, people, str(tmp_path / "abs" / "t"), "overwrite", {}, [])
    assert DeltaTable.is_deltatable(str(tmp_path / "abs" / "t"))
    delta.write(ctx, people, "rel/t", "overwrite", {}, [])
    assert DeltaTable.is_deltatable(str(ctx.lake / "rel" / "t"))  # relative paths live in the lake
    assert delta.read(ctx, "rel/t", {}).num_rows == 4


def test_bad_lake_name(ctx: SourceContext, delta, people: pa.Table) -> None:
    with pytest.raises(SourceError, match="delta table name 'a.b.c' is not valid"):
        delta.write(ctx, people, "a.b.c", "overwrite", {}, [])


def test_missing_table_names_it(ctx: SourceContext, delta) -> None:
    with pytest.raises(SourceError) as err:
        delta.read(ctx, "db.nothing", {})
    assert err.value.message.startswith("delta table db.nothing does not exist: relative paths resolve in the lake")
    assert "(looked in " in err.value.message and "/tmp is private to each session" in err.value.message
    assert str(ctx.data_dir / "lake" / "db" / "nothing") in err.value.message


def test_save_modes(ctx: SourceContext, delta, people: pa.Table) -> None:
    delta.write(ctx, people, "db.t", "errorIfExists", {}, [])
    with pytest.raises(SourceError) as err:
        delta.write(ctx, people, "db.t", "errorifexists", {}, [])
    assert err.value.message == ("delta table db.t already exists; use `save overwrite` to replace it "
                                 "or `save append` to add to it")
    delta.write(ctx, people, "db.t", "IGNORE", {}, [])
    assert DeltaTable(str(ctx.data_dir / "lake/db/t")).version() == 0  # ignore wrote nothing
    delta.write(ctx, people, "db.t", "append", {}, [])
    assert delta.read(ctx, "db.t", {}).num_rows == 8
    delta.write(ctx, people.slice(0, 1), "db.t", "overwrite", {}, [])
    assert delta.read(ctx, "db.t", {}).num_rows == 1
    with pytest.raises(SourceError, match="unknown save mode 'merge'"):
        delta.write(ctx, people, "db.t", "merge", {}, [])


def test_version_as_of_and_timestamp_as_of(ctx: SourceContext, delta, people: pa.Table) -> None:
    delta.write(ctx, people, "db.t", "overwrite", {}, [])
    time.sleep(0.05)
    between = datetime.now(timezone.utc).isoformat()
    time.sleep(0.05)
    delta.write(ctx, people.slice(0, 2), "db.t", "overwrite", {}, [])
    assert delta.read(ctx, "db.t", {}).num_rows == 2
    assert delta.read(ctx, "db.t", {"versionAsOf": "0"}).num_rows == 4
    assert delta.read(ctx, "db.t", {"timestampAsOf": between}).num_rows == 4
    with pytest.raises(SourceError, match="option versionAsOf=5 is out of range: delta table db.t has versions 0 to 1"):
        delta.read(ctx, "db.t", {"versionAsOf": "5"})
    with pytest.raises(SourceError, match="option versionAsOf must be an integer, got 'latest'"):
        delta.read(ctx, "db.t", {"versionAsOf": "latest"})
    with pytest.raises(SourceError, match="option timestampAsOf='not a time'"):
        delta.read(ctx, "db.t", {"timestampAsOf": "not a time"})


def test_version_range_unions_snapshots_with_their_version(ctx: SourceContext, delta) -> None:
    for i in range(4):
        delta.write(ctx, pa.table({"v": [i]}), "db.t", "append", {}, [])
    t = delta.read(ctx, "db.t", {"startingVersion": "1", "endingVersion": "3"})
    assert t.schema.field("__delta_version__").type == pa.int64()
    got = sorted(zip(t.column("__delta_version__").to_pylist(), t.column("v").to_pylist(), strict=True))
    # [1, 3): the snapshot of version 1 (rows 0, 1) and of version 2 (rows 0, 1, 2).
    assert got == [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]


def test_version_range_errors(ctx: SourceContext, delta, people: pa.Table) -> None:
    delta.write(ctx, people, "db.t", "overwrite", {}, [])
    with pytest.raises(SourceError, match="startingVersion and endingVersion go together"):
        delta.read(ctx, "db.t", {"startingVersion": "0"})
    with pytest.raises(SourceError, match="out of range: delta table db.t has versions 0 to 0"):
        delta.read(ctx, "db.t", {"startingVersion": "0", "endingVersion": "3"})


def test_append_with_another_schema_shows_both(ctx: SourceContext, delta, people: pa.Table) -> None:
    delta.write(ctx, people, "db.t", "overwrite", {}, [])
    with pytest.raises(SourceError) as err:
        delta.write(ctx, pa.table({"id": [1], "extra": ["x"]}), "db.t", "append", {}, [])
    assert err.value.message == (
        "cannot append to delta table db.t: the schemas differ\n"
        "  existing: id int64, name string, score double, team string\n"
        "  new:      id int64, extra string\n"
        'Add where mergeSchema="true" to add new columns.')
    assert delta.read(ctx, "db.t", {}).num_rows == 4


def test_overwrite_schema_needs_the_option(ctx: SourceContext, delta, people: pa.Table) -> None:
    delta.write(ctx, people, "db.t", "overwrite", {}, [])
    with pytest.raises(SourceError, match="cannot overwrite delta table db.t: the schemas differ"):
        delta.write(ctx, pa.table({"x": ["new"]}), "db.t", "overwrite", {}, [])
    assert delta.read(ctx, "db.t", {}).num_rows == 4  # the failed save left version 0 readable
    delta.write(ctx, pa.table({"x": ["new"]}), "db.t", "overwrite", {"overwriteSchema": "true"}, [])
    assert delta.read(ctx, "db.t", {}).to_pydict() == {"x": ["new"]}
    delta.write(ctx, pa.table({"x": ["b"], "y": [1]}), "db.t", "append", {"mergeSchema": "true"}, [])
    assert delta.read(ctx, "db.t", {}).num_rows == 2


def test_partition_by(ctx: SourceContext, delta, people: pa.Table, rows) -> None:
    delta.write(ctx, people, "db.p", "overwrite", {}, ["team"])
    location = ctx.data_dir / "lake" / "db" / "p"
    assert DeltaTable(str(location)).metadata().partition_columns == ["team"]
    assert (location / "team=a").is_dir()
    assert rows(delta.read(ctx, "db.p", {}).select(people.column_names)) == rows(people)
    with pytest.raises(SourceError, match="partitioning does not match"):
        delta.write(ctx, people, "db.p", "append", {}, ["id"])
    with pytest.raises(SourceError, match="partitionBy column nope is not in the table"):
        delta.write(ctx, people, "db.p", "append", {}, ["nope"])


def test_failed_save_leaves_previous_version(ctx: SourceContext, delta, people: pa.Table) -> None:
    delta.write(ctx, people, "db.t", "overwrite", {}, [])
    bad = pa.table({"id": pa.array([None, None], pa.null())})  # Delta has no null type: the write raises
    with pytest.raises(SourceError, match="cannot (save to|overwrite) delta table db.t"):
        delta.write(ctx, bad, "db.t", "overwrite", {}, [])
    assert delta.read(ctx, "db.t", {}).equals(delta.read(ctx, "db.t", {"versionAsOf": "0"}))
    assert delta.read(ctx, "db.t", {}).num_rows == 4


def test_read_dataset_is_lazy_and_time_travels(ctx: SourceContext, delta, people: pa.Table) -> None:
    delta.write(ctx, people, "db.t", "overwrite", {}, [])
    delta.write(ctx, people, "db.t", "append", {}, [])
    assert delta.dataset(ctx, "db.t", {}).count_rows() == 8
    assert delta.dataset(ctx, "db.t", {"versionAsOf": "0"}).count_rows() == 4


def test_file_table_round_trips(ctx: SourceContext, delta) -> None:
    """The seed saves a model as start/offset/value rows; they must come back byte for byte."""
    chunks = [bytes([i]) * 65536 for i in range(5)]
    table = pa.table({"start": pa.array([i * 65536 for i in range(5)], pa.int64()),
                      "offset": pa.array([65536] * 5, pa.int64()),
                      "value": pa.array(chunks, pa.binary())})
    delta.write(ctx, table, "ai_model.mnist_model", "overwrite", {}, [])
    back = delta.read(ctx, "ai_model.mnist_model", {}).sort_by("start")
    assert back.equals(table)
