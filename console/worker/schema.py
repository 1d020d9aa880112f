"""Output schemas as MLSQL writes them, and typing build_result rows by them.

Accepted forms: `st(field(a,long),field(b,array(double)))` (MLSQL's simple schema), `file`
(start/offset/value), Spark DDL (`a long, b array<string>`), Spark StructType JSON.
Columns are matched to rows by position, as MLSQL does; names come from the schema.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

import pyarrow as pa


class SchemaError(ValueError):
    """The schema text is invalid, or rows do not fit it (a user error: kind "schema")."""


FILE_SCHEMA = "st(field(start,long),field(offset,long),field(value,binary))"

_SIMPLE: dict[str, pa.DataType] = {
    "boolean": pa.bool_(), "bool": pa.bool_(), "byte": pa.int8(), "tinyint": pa.int8(),
    "short": pa.int16(), "smallint": pa.int16(), "integer": pa.int32(), "int": pa.int32(),
    "long": pa.int64(), "bigint": pa.int64(), "float": pa.float32(), "real": pa.float32(),
    "double": pa.float64(), "decimal": pa.float64(), "string": pa.string(), "varchar": pa.string(),
    "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("us"),
}


def parse_schema(text: str | None) -> pa.Schema | None:
    """The Arrow schema a `schema` conf value names; None when there is none (infer)."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    if text == "file":
        text = FILE_SCHEMA
    if text.startswith("{"):
        return _from_json(text)
    if text.startswith("st("):
        typ = _SimpleParser(text).parse()
        assert isinstance(typ, pa.StructType)
        return pa.schema(list(typ))
    return _from_ddl(text)


class _SimpleParser:
    def __init__(self, text: str) -> None:
        self.tokens = re.findall(r"[(),]|[^(),\s]+", text)
        self.i = 0

    def parse(self) -> pa.DataType:
        typ = self._type()
        if self.i != len(self.tokens):
            raise SchemaError(f"unexpected {' '.join(self.tokens[self.i:])!r} after the schema")
        return typ

    def _next(self, expected: str | None = None) -> str:
        if self.i >= len(self.tokens):
            raise SchemaError(f"schema ends early{f', expected {expected!r}' if expected else ''}")
        tok = self.tokens[self.i]
        self.i += 1
        if expected is not None and tok != expected:
            raise SchemaError(f"expected {expected!r} in the schema, got {tok!r}")
        return tok

    def _type(self) -> pa.DataType:
        name = self._next().lower()
        if name == "st":
            self._next("(")
            fields = [self._field()]
            while self._next() == ",":
                fields.append(self._field())
            return pa.struct(fields)
        if name == "array":
            self._next("(")
            inner = self._type()
            self._next(")")
            return pa.list_(inner)
        if name == "map":
            self._next("(")
            key = self._type()
            self._next(",")
            value = self._type()
            self._next(")")
            return pa.map_(key, value)
        if name in _SIMPLE:
            return _SIMPLE[name]
        raise SchemaError(f"unknown type {name!r} in the schema")

    def _field(self) -> pa.Field:
        self._next("field")
        self._next("(")
        name = self._next()
        self._next(",")
        typ = self._type()
        self._next(")")
        return pa.field(name, typ)


def _from_ddl(text: str) -> pa.Schema:
    """Spark DDL: `a long, b array<string>, c struct<x:int,y:string>`."""
    fields = []
    for part in _split_top(text, ","):
        part = part.strip()
        m = re.match(r"`?([\w.]+)`?\s*:?\s+(.+)$", part, re.S)
        if not m:
            raise SchemaError(f"cannot read {part!r} as `name type` in the schema")
        fields.append(pa.field(m.group(1), _ddl_type(m.group(2).strip())))
    return pa.schema(fields)


def _ddl_type(text: str) -> pa.DataType:
    low = text.lower()
    if low.endswith(" not null"):
        low = low[: -len(" not null")].strip()
        text = text[: len(low)]
    m = re.match(r"(array|map|struct)\s*<(.*)>$", text, re.S | re.I)
    if m:
        kind, inner = m.group(1).lower(), m.group(2)
        if kind == "array":
            return pa.list_(_ddl_type(inner.strip()))
        if kind == "map":
            key, value = _split_top(inner, ",")
            return pa.map_(_ddl_type(key.strip()), _ddl_type(value.strip()))
        fields = []
        for part in _split_top(inner, ","):
            name, _, typ = part.partition(":")
            fields.append(pa.field(name.strip().strip("`"), _ddl_type(typ.strip())))
        return pa.struct(fields)
    base = re.sub(r"\(.*\)$", "", low).strip()  # decimal(10,2), varchar(20)
    if base in _SIMPLE:
        return _SIMPLE[base]
    raise SchemaError(f"unknown type {text!r} in the schema")


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<(" and 1 or 0
        depth -= ch in ">)" and 1 or 0
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def _from_json(text: str) -> pa.Schema:
    def conv(t: Any) -> pa.DataType:
        if isinstance(t, str):
            return _ddl_type(t)
        kind = t.get("type")
        if kind == "struct":
            return pa.struct([pa.field(f["name"], conv(f["type"])) for f in t["fields"]])
        if kind == "array":
            return pa.list_(conv(t["elementType"]))
        if kind == "map":
            return pa.map_(conv(t["keyType"]), conv(t["valueType"]))
        raise SchemaError(f"unknown type {t!r} in the JSON schema")

    try:
        typ = conv(json.loads(text))
    except (ValueError, KeyError) as exc:
        raise SchemaError(f"cannot read the JSON schema: {exc}") from exc
    return pa.schema(list(typ))


def rows_to_table(rows: Iterable[Any], schema: pa.Schema | None) -> pa.Table:
    """Rows (dicts), a pandas DataFrame or an Arrow table -> an Arrow table typed by schema."""
    if isinstance(rows, pa.RecordBatch):
        rows = pa.Table.from_batches([rows])
    if isinstance(rows, pa.Table):
        return _retype(rows, schema)
    if type(rows).__name__ == "DataFrame" and hasattr(rows, "to_dict"):
        return _retype(pa.Table.from_pandas(rows, preserve_index=False), schema)
    rows = list(rows)
    if schema is None:
        if not rows:
            return pa.table({"value": pa.array([], pa.string())})  # MLSQL's empty result
        return pa.Table.from_pylist([_as_dict(r, i) for i, r in enumerate(rows)])
    columns: list[list[Any]] = [[] for _ in schema]
    keys: Sequence[str] | None = None
    for i, row in enumerate(rows):
        row = _as_dict(row, i)
        if keys is None:
            keys = list(row)
        if len(row) != len(schema):
            raise SchemaError(f"build_result: row {i} has {len(row)} values {list(row)}, but the schema has "
                              f"{len(schema)} columns {schema.names}")
        for j, key in enumerate(keys):
            columns[j].append(row.get(key))
    arrays = []
    for j, field in enumerate(schema):
        try:
            arrays.append(pa.array(columns[j], type=field.type, from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as exc:
            raise SchemaError(_explain(j, field, keys or [], columns[j], exc)) from None
    return pa.Table.from_arrays(arrays, schema=schema)


def _as_dict(row: Any, i: int) -> dict:
    if isinstance(row, dict):
        return row
    if hasattr(row, "_asdict"):
        return row._asdict()
    raise SchemaError(f"build_result: row {i} is a {type(row).__name__}, expected a dict of column -> value")


def _explain(j: int, field: pa.Field, keys: Sequence[str], values: list, exc: Exception) -> str:
    key = keys[j] if j < len(keys) else "?"
    for i, v in enumerate(values):
        try:
            pa.array([v], type=field.type, from_pandas=True)
        except Exception:
            return (f"build_result: row {i}, value {key!r} = {_short(v)} ({type(v).__name__}) does not fit "
                    f"schema column {j + 1} `{field.name} {field.type}` (columns match by position)")
    return f"build_result: column {j + 1} `{field.name} {field.type}`: {exc}"


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _retype(table: pa.Table, schema: pa.Schema | None) -> pa.Table:
    if schema is None:
        return table
    if table.num_columns != len(schema):
        raise SchemaError(f"build_result: the table has {table.num_columns} columns {table.column_names}, "
                          f"but the schema has {len(schema)} columns {schema.names}")
    cols = []
    for j, field in enumerate(schema):
        try:
            cols.append(table.column(j).cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise SchemaError(f"build_result: column {j + 1} ({table.column_names[j]}: {table.schema.types[j]}) "
                              f"cannot be cast to schema column `{field.name} {field.type}`: {exc}") from None
    return pa.Table.from_arrays(cols, schema=schema)
