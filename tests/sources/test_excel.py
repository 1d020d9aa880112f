"""load excel.`…`: a real .xlsx written with openpyxl, read through the source registry."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from console.sources import SourceContext, SourceError, get_source


@pytest.fixture
def ctx(tmp_path: Path) -> SourceContext:
    return SourceContext(tmp_path / "data")


def write_book(path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "2024"
    for row in (("region", "n", "share", "when", "note"), ("north", 372, 0.4, dt.datetime(2024, 1, 2), "a"),
                ("south", 589, 1, dt.datetime(2024, 2, 3), 7), (None, None, None, None, None)):
        sheet.append(row)
    book.create_sheet("other").append(("x",))
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)


def test_a_sheet_is_a_typed_table(ctx: SourceContext) -> None:
    write_book(ctx.lake / "uploads" / "sales.xlsx")
    table = get_source("excel").read(ctx, "uploads/sales.xlsx", {})
    assert table.column_names == ["region", "n", "share", "when", "note"]
    assert [str(t) for t in table.schema.types] == ["string", "int64", "double", "timestamp[us]", "string"]
    assert table.to_pylist()[1] == {"region": "south", "n": 589, "share": 1.0, "when": dt.datetime(2024, 2, 3),
                                    "note": "7"}  # a column mixing kinds is text, nothing guessed
    other = get_source("excel").read(ctx, "uploads/sales.xlsx", {"sheetName": "other", "header": "false"})
    assert other.to_pylist() == [{"_c0": "x"}]


def test_mistakes_are_said_plainly(ctx: SourceContext) -> None:
    write_book(ctx.lake / "b.xlsx")
    with pytest.raises(SourceError, match="has no sheet 'nope'; its sheets: 2024, other"):
        get_source("excel").read(ctx, "b.xlsx", {"sheetName": "nope"})
    (ctx.lake / "fake.xlsx").write_bytes(b"PK\x03\x04 not really a workbook")
    with pytest.raises(SourceError, match="not a readable .xlsx workbook"):
        get_source("excel").read(ctx, "fake.xlsx", {})
    import pyarrow as pa

    with pytest.raises(SourceError, match="read-only"):
        get_source("excel").write(ctx, pa.table({"a": [1]}), "out.xlsx", "overwrite", {}, [])
