"""Each cell's whole result: pages of any range, sorted; the cap and the spill; download files; readable values."""
from __future__ import annotations

import dataclasses
import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from console.kernel import queries
from console.kernel.results import ResultCache, download_path, format_table, json_safe, result_event
from console.kernel.session import Session


def test_values_are_readable_markers_not_reprs() -> None:
    assert json_safe(2 ** 60) == {"$": "int", "text": str(2 ** 60)}
    assert json_safe(12) == 12
    assert json_safe(float("nan")) == {"$": "float", "text": "NaN"}
    assert json_safe(decimal.Decimal("1.10")) == {"$": "decimal", "text": "1.10"}
    assert json_safe(decimal.Decimal("7")) == 7
    assert json_safe(b"\x00" * 100) == {"$": "binary", "size": 100, "hex": "00" * 16}
    assert json_safe(dt.date(2024, 1, 2)) == "2024-01-02"
    cut = json_safe(list(range(150)))
    assert cut["$"] == "list" and cut["items"] == list(range(100)) and cut["more"] == 50
    # A real mapping that has a "$" key is wrapped, so it is never read as a marker.
    assert json_safe({"$": 1}) == {"$": "map", "value": {"$": 1}}


def test_big_int64_column_keeps_every_digit() -> None:
    table = pa.table({"small": [1, 2], "big": [1, 2 ** 62]})
    ev = result_event("t", table, 10)
    assert ev.rows == [[1, 1], [2, {"$": "int", "text": str(2 ** 62)}]]
    assert "4611686018427387904" in format_table(ev)


def test_page_sorts_the_whole_result_and_pages_anywhere(session: Session) -> None:
    out = session.run_cell("select id, 10000 - id as rev from range(10000) t(id) as r;", cell="c1")
    assert out.ok and out.result is not None and len(out.result.rows) == 100
    page = queries.answer(session, "result_page", {"cell": "c1", "offset": 5000, "limit": 3,
                                                  "sort": [["rev", "asc"]]})
    assert page["total_rows"] == 10000 and page["offset"] == 5000
    assert page["rows"] == [[4999, 5001], [4998, 5002], [4997, 5003]]
    with pytest.raises(ValueError, match="no column 'nope'.*id, rev"):
        queries.answer(session, "result_page", {"cell": "c1", "sort": [["nope", "asc"]]})
    with pytest.raises(LookupError, match="run the cell"):
        queries.answer(session, "result_page", {"cell": "other"})


def test_results_beyond_the_cap_spill_to_the_session_cache(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg = type("Cfg", (), {"RESULT_KEEP_BYTES": 100_000})()
    cache = ResultCache(cfg, tmp_path)
    big = pa.table({"x": list(range(10_000))})  # 80 KB each
    cache.keep("a", "ta", big)
    cache.keep("b", "tb", big)
    assert cache.spilled("a") and not cache.spilled("b")
    assert (tmp_path / "results" / "a.arrow").exists()
    name, back = cache.get("a")
    assert name == "ta" and back.equals(big)
    cache.keep("a", "ta2", pa.table({"x": [1]}))  # a re-run replaces the spilled file
    assert not (tmp_path / "results" / "a.arrow").exists() and cache.get("a")[0] == "ta2"
    ResultCache(cfg, tmp_path)  # a new kernel starts with no spilled results
    assert not (tmp_path / "results").exists()


def test_result_file_writes_the_whole_result_where_the_server_said(session: Session) -> None:
    session.cfg = dataclasses.replace(session.cfg, RESULT_ROWS=5)
    out = session.run_cell("select id, cast(id as varchar) as s, [id, id] as l, cast('ab' as blob) as b "
                           "from range(300) t(id) as r;", cell="c2")
    assert out.ok
    name = "0123456789abcdef0123456789abcdef"
    ans = queries.answer(session, "result_file", {"cell": "c2", "format": "csv", "name": name,
                                                 "sort": [["id", "desc"]]})
    path = download_path(session.cache_dir, name, "csv")
    assert ans["rows"] == 300 and path.stat().st_size == ans["bytes"]
    back = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types={"b": pa.string()}))
    assert back.num_rows == 300 and back.column("id")[0].as_py() == 299
    assert back.column("l")[0].as_py() == "[299, 299]" and back.column("b")[0].as_py() == "0x6162"
    queries.answer(session, "result_file", {"cell": "c2", "format": "parquet", "name": name})
    assert pq.read_table(download_path(session.cache_dir, name, "parquet")).num_rows == 300
    for bad in ("../../server/secret_key", "A" * 32, ""):
        with pytest.raises(ValueError, match="32 lowercase hex"):
            queries.answer(session, "result_file", {"cell": "c2", "format": "csv", "name": bad})
    with pytest.raises(ValueError, match="csv, parquet"):
        queries.answer(session, "result_file", {"cell": "c2", "format": "xlsx", "name": name})
