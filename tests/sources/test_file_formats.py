"""parquet, csv, json and text: round trips, folders, save modes, partitions, atomic overwrite."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from console.sources import SourceContext, SourceError, get_source, known_formats
from console.sources.files import FileSource


def test_registry_is_case_insensitive_and_lists_formats() -> None:
    assert get_source("PARQUET") is get_source("parquet")
    assert {"parquet", "csv", "json", "text", "delta", "jdbc"} <= set(known_formats())


def test_unknown_format_lists_the_known_ones() -> None:
    with pytest.raises(SourceError) as err:
        get_source("xyz")
    assert err.value.message == f"unknown format 'xyz'; known formats: {', '.join(known_formats())}"
    assert "csv, csvStr, delta" in err.value.message


@pytest.mark.parametrize("fmt", ["parquet", "json"])
def test_typed_round_trip(ctx: SourceContext, people: pa.Table, rows, fmt: str) -> None:
    src = get_source(fmt)
    src.write(ctx, people, "out", "overwrite", {}, [])
    back = src.read(ctx, "out", {})
    assert rows(back) == rows(people)
    assert back.schema.field("id").type == pa.int64()
    assert (ctx.lake / "out").is_dir()


def test_csv_follows_spark_defaults(ctx: SourceContext, people: pa.Table, rows) -> None:
    csv = get_source("csv")
    csv.write(ctx, people, str(ctx.lake / "p"), "overwrite", {"header": "true"}, [])
    as_text = csv.read(ctx, "p", {"header": "true"})
    assert as_text.column_names == people.column_names
    assert all(pa.types.is_string(t) for t in as_text.schema.types)
    typed = csv.read(ctx, "p", {"header": "true", "inferSchema": "true"})
    assert rows(typed) == rows(people)
    no_header = csv.read(ctx, "p", {})
    assert no_header.column_names == ["_c0", "_c1", "_c2", "_c3"]
    assert no_header.num_rows == 5  # the header line is data without header="true"


def test_csv_delimiter_and_bad_option_values(ctx: SourceContext, tmp_path: Path) -> None:
    f = ctx.lake / "semi.csv"
    f.write_text("a;b\n1;x\n2;y\n")
    t = get_source("csv").read(ctx, "semi.csv", {"header": "true", "delimiter": ";", "inferSchema": "true"})
    assert t.to_pydict() == {"a": [1, 2], "b": ["x", "y"]}
    with pytest.raises(SourceError, match="option header must be true or false, got 'yes please'"):
        get_source("csv").read(ctx, "semi.csv", {"header": "yes please"})
    with pytest.raises(SourceError, match="option delimiter must be a single character, got ';;'"):
        get_source("csv").read(ctx, "semi.csv", {"delimiter": ";;"})


def test_text_lines_and_single_column_rule(ctx: SourceContext) -> None:
    (ctx.lake / "notes.txt").write_text("first\r\nsecond\n\nfourth\n")
    text = get_source("text")
    t = text.read(ctx, "notes.txt", {})
    assert t.to_pydict() == {"value": ["first", "second", "", "fourth"]}
    text.write(ctx, t, "copy", "overwrite", {}, [])
    assert text.read(ctx, "copy", {}).equals(t)
    with pytest.raises(SourceError, match="exactly one string column"):
        text.write(ctx, pa.table({"a": [1], "b": [2]}), "bad", "overwrite", {}, [])


def test_folder_reads_data_files_recursively_sorted_and_skips_hidden(ctx: SourceContext) -> None:
    d = ctx.lake / "logs"
    (d / "sub").mkdir(parents=True)
    (d / "b.json").write_text('{"n": 2}\n')
    (d / "a.json").write_text('{"n": 1}\n')
    (d / "sub" / "c.json").write_text('{"n": 3}\n')
    (d / "_SUCCESS").write_text("")
    (d / ".hidden.json").write_text('{"n": 99}\n')
    (d / "README.md").write_text("not data")
    assert get_source("json").read(ctx, str(d), {}).column("n").to_pylist() == [1, 2, 3]


def test_spark_style_part_files_without_suffix(ctx: SourceContext) -> None:
    d = ctx.lake / "spark_out"
    d.mkdir()
    (d / "part-00000").write_text("x\n")
    (d / "part-00001").write_text("y\n")
    (d / "_SUCCESS").write_text("")
    assert get_source("text").read(ctx, "spark_out", {}).column("value").to_pylist() == ["x", "y"]


def test_missing_path_names_it(ctx: SourceContext) -> None:
    for fmt in ("parquet", "csv", "json", "text"):
        with pytest.raises(SourceError) as err:
            get_source(fmt).read(ctx, "/no/such/place", {})
        # Where it was looked for, which roots are allowed, and that /tmp is private (paths.missing).
        assert err.value.message.startswith("path /no/such/place does not exist: relative paths resolve in the lake")
        assert "/tmp is private to each session" in err.value.message


def test_empty_folder_says_so(ctx: SourceContext) -> None:
    (ctx.lake / "empty").mkdir()
    with pytest.raises(SourceError, match="path empty has no parquet files"):
        get_source("parquet").read(ctx, "empty", {})


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_every_save_mode(ctx: SourceContext, people: pa.Table, fmt: str) -> None:
    src = get_source(fmt)
    opts = {"header": "true"} if fmt == "csv" else {}
    src.write(ctx, people, "t", "errorIfExists", opts, [])
    with pytest.raises(SourceError) as err:
        src.write(ctx, people, "t", "ERRORIFEXISTS", opts, [])
    assert "already exists" in err.value.message
    assert "`save overwrite`" in err.value.message and "`save append`" in err.value.message
    src.write(ctx, people.slice(0, 1), "t", "ignore", opts, [])
    assert src.read(ctx, "t", opts).num_rows == 4
    src.write(ctx, people, "t", "Append", opts, [])
    assert src.read(ctx, "t", opts).num_rows == 8
    assert len(list((ctx.lake / "t").iterdir())) == 2  # append added one part file
    src.write(ctx, people.slice(0, 1), "t", "overwrite", opts, [])
    assert src.read(ctx, "t", opts).num_rows == 1
    with pytest.raises(SourceError, match="unknown save mode 'upsert'"):
        src.write(ctx, people, "t", "upsert", opts, [])


def test_parquet_append_with_another_schema_shows_both(ctx: SourceContext, people: pa.Table) -> None:
    src = get_source("parquet")
    src.write(ctx, people, "t", "overwrite", {}, [])
    with pytest.raises(SourceError) as err:
        src.write(ctx, pa.table({"id": ["x"]}), "t", "append", {}, [])
    assert err.value.message == (
        "cannot append to t: the schemas differ\n"
        "  existing: id int64, name string, score double, team string\n"
        "  new:      id string")


def test_partition_by_writes_hive_folders_and_reads_them_back(ctx: SourceContext, rows) -> None:
    table = pa.table({"id": [1, 2, 3, 4], "team": ["a", "b", "a", None], "year": [2020, 2020, 2021, 2021]})
    for fmt in ("parquet", "json", "csv"):
        src = get_source(fmt)
        opts = {"header": "true", "inferSchema": "true"} if fmt == "csv" else {}
        src.write(ctx, table, f"p_{fmt}", "overwrite", opts, ["team", "year"])
        root = ctx.lake / f"p_{fmt}"
        assert sorted(p.name for p in root.iterdir()) == ["team=__HIVE_DEFAULT_PARTITION__", "team=a", "team=b"]
        assert (root / "team=a" / "year=2021").is_dir()
        back = src.read(ctx, f"p_{fmt}", opts)
        assert back.schema.field("year").type == pa.int64()
        assert rows(back.select(["id", "team", "year"])) == rows(table), fmt
        src.write(ctx, table.slice(0, 1), f"p_{fmt}", "append", opts, ["team", "year"])
        assert src.read(ctx, f"p_{fmt}", opts).num_rows == 5
        with pytest.raises(SourceError, match=r"partitioned by \[team, year\] but the save uses \[\]"):
            src.write(ctx, table, f"p_{fmt}", "append", opts, [])


def test_partition_by_unknown_column(ctx: SourceContext, people: pa.Table) -> None:
    with pytest.raises(SourceError, match="partitionBy column nope is not in the table"):
        get_source("parquet").write(ctx, people, "t", "overwrite", {}, ["nope"])


def test_failed_overwrite_leaves_previous_data(ctx: SourceContext, people: pa.Table, monkeypatch) -> None:
    src = get_source("parquet")
    src.write(ctx, people, "t", "overwrite", {}, [])
    real_write = type(src).write_file

    def half_then_fail(self: FileSource, table: pa.Table, path: Path, options: dict) -> None:
        real_write(self, table.slice(0, 1), path, options)  # a part file is on disk ...
        raise OSError("disk full")  # ... then the write dies

    monkeypatch.setattr(type(src), "write_file", half_then_fail)
    with pytest.raises(SourceError, match="cannot save parquet to t: disk full"):
        src.write(ctx, pa.table({"id": [9]}), "t", "overwrite", {}, [])
    monkeypatch.undo()
    assert src.read(ctx, "t", {}).equals(people)
    assert [p.name for p in ctx.lake.iterdir()] == ["t"]  # no staging folder left behind


def test_failed_partitioned_overwrite_leaves_previous_data(ctx: SourceContext, people: pa.Table) -> None:
    src = get_source("csv")
    src.write(ctx, people, "t", "overwrite", {"header": "true"}, [])
    bad = pa.table({"k": [1, 2], "nested": pa.array([[1], [2]])})  # csv cannot hold a list column
    with pytest.raises(SourceError, match="cannot save csv to t"):
        src.write(ctx, bad, "t", "overwrite", {}, ["k"])
    assert src.read(ctx, "t", {"header": "true"}).num_rows == 4
    assert [p.name for p in ctx.lake.iterdir()] == ["t"]


def test_overwrite_replaces_a_single_file_target(ctx: SourceContext, people: pa.Table) -> None:
    pq.write_table(people, ctx.lake / "one.parquet")
    src = get_source("parquet")
    assert src.read(ctx, "one.parquet", {}).equals(people)
    with pytest.raises(SourceError, match="single file"):
        src.write(ctx, people, "one.parquet", "append", {}, [])
    src.write(ctx, people.slice(0, 2), "one.parquet", "overwrite", {}, [])
    assert src.read(ctx, "one.parquet", {}).num_rows == 2


def test_absolute_paths_work_as_written(ctx: SourceContext, tmp_path: Path, people: pa.Table) -> None:
    target = tmp_path / "elsewhere" / "mnist"
    get_source("parquet").write(ctx, people, str(target), "overwrite", {}, [])
    assert target.is_dir()
    assert get_source("parquet").read(ctx, str(target), {}).num_rows == 4


def test_json_writes_binary_dates_and_nested_values(ctx: SourceContext) -> None:
    import datetime as dt

    t = pa.table({"b": [b"\x00\x01"], "d": [dt.date(2024, 1, 2)], "l": [[1, 2]], "s": [{"x": 1}]})
    get_source("json").write(ctx, t, "j", "overwrite", {}, [])
    line = next((ctx.lake / "j").iterdir()).read_text().strip()
    assert json.loads(line) == {"b": "AAE=", "d": "2024-01-02", "l": [1, 2], "s": {"x": 1}}


def test_binary_file_reads_each_file_as_a_row(ctx: SourceContext) -> None:
    d = ctx.lake / "imgs"
    (d / "nested").mkdir(parents=True)
    (d / "a.png").write_bytes(b"\x89PNG-a")
    (d / "nested" / "b.png").write_bytes(b"\x89PNG-bb")
    (d / "notes.txt").write_text("skip me")
    t = get_source("binaryfile").read(ctx, "imgs", {"pathGlobFilter": "*.png"})
    assert t.column_names == ["path", "modificationTime", "length", "content"]
    assert t.column("path").to_pylist() == [f"file:{d / 'a.png'}", f"file:{d / 'nested' / 'b.png'}"]
    assert t.column("length").to_pylist() == [6, 7]
    assert t.column("content").to_pylist() == [b"\x89PNG-a", b"\x89PNG-bb"]
    with pytest.raises(SourceError, match="format binaryFile cannot be saved"):
        get_source("binaryFile").write(ctx, t, "x", "overwrite", {}, [])


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json", "delta"])
def test_overwrite_the_path_that_was_loaded(ctx: SourceContext, people: pa.Table, fmt: str) -> None:
    """`load X.`p` as t; select … from t as u; save overwrite u as X.`p`` works (Spark refuses it)."""
    src = get_source(fmt)
    path = "self/p" if fmt == "delta" else "self"
    src.write(ctx, people, path, "overwrite", {}, [])
    loaded = src.read(ctx, path, {})
    src.write(ctx, loaded.slice(0, 3), path, "overwrite", {}, [])
    assert src.read(ctx, path, {}).num_rows == 3
