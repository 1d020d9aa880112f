"""Excel workbooks (.xlsx): `load excel.`uploads/sales.xlsx` where sheetName="2024" as t;`.

Read-only: one sheet (the first unless `sheetName`), its first row the column names unless
`header="false"`. A column of numbers stays numeric, of dates a timestamp; a column mixing kinds
becomes text, so nothing is lost or guessed. Formulas give their last computed value.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from console.sources.base import SourceError, bool_option, option, register
from console.sources.files import FileSource

if TYPE_CHECKING:
    import pyarrow as pa

MAX_ROWS = 5_000_000  # a sheet is read into memory whole: bigger data belongs in parquet or CSV


@register("excel")
class ExcelSource(FileSource):
    suffixes = (".xlsx",)
    suffix = ".xlsx"

    def read_file(self, path: Path, options: dict[str, str]) -> "pa.Table":
        import openpyxl  # type: ignore[import-untyped]

        try:
            book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except Exception as exc:  # a zip that is no workbook, a damaged one: the user's data, said plainly
            raise SourceError(f"{path.name} is not a readable .xlsx workbook: {exc}") from None
        try:
            sheet_name = option(options, "sheetName")
            if sheet_name is not None and sheet_name not in book.sheetnames:
                raise SourceError(f"{path.name} has no sheet {sheet_name!r}; its sheets: {', '.join(book.sheetnames)}")
            sheet = book[sheet_name] if sheet_name is not None else book.worksheets[0]
            rows = []
            for i, row in enumerate(sheet.iter_rows(values_only=True)):
                if i > MAX_ROWS:
                    raise SourceError(f"{path.name} has more than {MAX_ROWS} rows: save it as CSV or Parquet")
                rows.append(list(row))
        finally:
            book.close()
        return _table(rows, bool_option(options, "header", True))

    def write(self, ctx: Any, table: "pa.Table", path: str, mode: str, options: dict[str, str],
              partition_by: list[str]) -> None:
        raise SourceError("excel is read-only here: save as csv or parquet (a spreadsheet opens both)")


def _table(rows: list[list[Any]], header: bool) -> "pa.Table":
    import pyarrow as pa

    while rows and all(v is None for v in rows[-1]):
        rows.pop()  # trailing empty rows a spreadsheet keeps after deletions
    width = max((len(r) for r in rows), default=0)
    names = [str(v) if v is not None else f"_c{i}" for i, v in enumerate(rows[0])] if header and rows else []
    names += [f"_c{i}" for i in range(len(names), width)]
    body = rows[1:] if header else rows
    columns = {}
    for i, name in enumerate(names):
        values = [r[i] if i < len(r) else None for r in body]
        columns[name] = _column(values)
    return pa.table(columns)


def _column(values: list[Any]) -> "pa.Array":
    import pyarrow as pa

    kinds = {_kind(v) for v in values if v is not None}
    if kinds <= {"int"}:
        return pa.array(values, pa.int64())
    if kinds <= {"int", "float"}:
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    if kinds <= {"bool"}:
        return pa.array(values, pa.bool_())
    if kinds <= {"time"}:
        return pa.array(values, pa.timestamp("us"))
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, dt.datetime):
        return "time"
    return "text"
