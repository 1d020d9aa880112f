"""`jsonStr` and `csvStr`: load a table from the text of a variable, as Byzer's examples make data.

    set people = '''
    {"name": "a", "age": 3}
    {"name": "b"}
    ''';
    load jsonStr.`people` as t;

The path is the variable's name (not a file). jsonStr reads one JSON object per line (a field a
line lacks is null), or one JSON array of objects; csvStr reads CSV text with the csv options
(header, delimiter/sep, quote, inferSchema, nullValue), header and inferSchema off as in Spark.
The variables come from the session through SourceContext.variables.
"""
from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Mapping

from console.sources.base import Source, SourceContext, SourceError, bool_option, char_option, option, register

if TYPE_CHECKING:
    import pyarrow as pa


def variable_text(ctx: SourceContext, name: str, fmt: str) -> str:
    """The value of the variable a jsonStr/csvStr path names, or a SourceError naming those set."""
    variables: Mapping[str, str] | None = getattr(ctx, "variables", None)
    if variables is None:
        raise SourceError(f"format {fmt} reads a variable, and this session passes none to its sources")
    key = name.strip()
    if key.startswith("${") and key.endswith("}"):
        key = key[2:-1].strip()
    if key not in variables:
        user = getattr(variables, "maps", [variables])[0]
        known = ", ".join(sorted(k for k in user if not k.startswith("__"))) or "none"
        raise SourceError(f"{fmt}.`{name}` reads the variable {key}, which is not set (variables set: {known}); "
                          f"set it first: set {key} = '''…''';")
    return str(variables[key])


@register("jsonStr")
class JsonStrSource(Source):
    def read(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pa.Table":
        import pyarrow as pa

        text = variable_text(ctx, path, self.name)
        stripped = text.strip()
        rows: list[object] = []
        if stripped.startswith("["):
            try:
                doc = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise SourceError(f"jsonStr.`{path}`: not JSON at line {exc.lineno}: {exc.msg}") from None
            rows = doc if isinstance(doc, list) else [doc]
        else:
            for n, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise SourceError(f"jsonStr.`{path}`: line {n} of the variable is not one JSON object "
                                      f"({exc.msg}); write one object per line") from None
        objects = [r for r in rows if isinstance(r, dict)]
        if len(objects) != len(rows):
            bad = next(i for i, r in enumerate(rows, 1) if not isinstance(r, dict))
            raise SourceError(f"jsonStr.`{path}`: JSON document {bad} is not an object; each row is one {{…}}")
        if not objects:
            return pa.table({})
        names: dict[str, None] = {}
        for r in objects:
            names.update(dict.fromkeys(r))
        try:
            return pa.Table.from_pylist([{k: r.get(k) for k in names} for r in objects])
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise SourceError(f"jsonStr.`{path}`: the rows do not make one table: {exc}") from None


@register("csvStr")
class CsvStrSource(Source):
    def read(self, ctx: SourceContext, path: str, options: dict[str, str]) -> "pa.Table":
        import pyarrow as pa
        import pyarrow.csv as pcsv

        text = variable_text(ctx, path, self.name).strip("\n")
        if not text.strip():
            return pa.table({})
        delimiter = char_option(options, "delimiter", option(options, "sep", ",") or ",")
        quote = char_option(options, "quote", '"')
        header = bool_option(options, "header", False)
        first = next(csv.reader(io.StringIO(text), delimiter=delimiter, quotechar=quote), [])
        if header:
            names = [c.strip() or f"_c{i}" for i, c in enumerate(first)]
            if len(set(names)) != len(names):
                raise SourceError(f"csvStr.`{path}`: the header repeats a column name: {', '.join(first)}")
        else:
            names = [f"_c{i}" for i in range(len(first))]
        infer = bool_option(options, "inferSchema", False)
        try:
            return pcsv.read_csv(
                io.BytesIO(text.encode("utf-8")),
                read_options=pcsv.ReadOptions(column_names=names, skip_rows=1 if header else 0),
                parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=quote),
                convert_options=pcsv.ConvertOptions(
                    column_types=None if infer else {n: pa.string() for n in names},
                    null_values=[option(options, "nullValue", "") or ""], strings_can_be_null=True))
        except pa.ArrowInvalid as exc:
            raise SourceError(f"csvStr.`{path}`: {exc}") from None
