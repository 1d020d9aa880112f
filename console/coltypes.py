"""Column types in Spark's names (string, bigint, decimal(38,0), array<int> …), whichever engine made them.

Every place that shows a column's type (result headers, the data panel, hovers, `!desc`) shows
these, so a table reads the same from DuckDB, the cluster engine, a file or a delta log. Arrow
types come from the engines; delta logs store Spark's JSON schema, whose primitive names are
Spark's `typeName` (integer, long), here turned into its SQL names (int, bigint).
"""
from __future__ import annotations

from typing import Any

# Arrow's str() of a type without parameters -> Spark's name. Unsigned integers widen as Spark
# reads them from Parquet (uint64 does not fit a bigint).
_ARROW = {
    "null": "void", "bool": "boolean", "int8": "tinyint", "int16": "smallint", "int32": "int", "int64": "bigint",
    "uint8": "smallint", "uint16": "int", "uint32": "bigint", "uint64": "decimal(20,0)",
    "halffloat": "float", "float": "float", "double": "double",
    "string": "string", "large_string": "string", "string_view": "string", "utf8": "string", "large_utf8": "string",
    "binary": "binary", "large_binary": "binary", "binary_view": "binary",
    "date32[day]": "date", "date64[ms]": "date", "month_day_nano_interval": "interval",
}

# A delta log's primitive names (Spark's typeName) that differ from Spark's SQL names.
_DELTA = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint", "null": "void"}


def from_arrow(t: Any) -> str:
    """Spark's name of a pyarrow DataType."""
    import pyarrow as pa

    if isinstance(t, pa.DictionaryType):
        return from_arrow(t.value_type)
    if isinstance(t, pa.ExtensionType):
        return from_arrow(t.storage_type)
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    if pa.types.is_time(t):
        return "time"
    if pa.types.is_duration(t):
        return "interval day to second"
    if pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) \
            or getattr(pa.types, "is_list_view", lambda _: False)(t):
        return f"array<{from_arrow(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{from_arrow(t.key_type)},{from_arrow(t.item_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{t.field(i).name}:{from_arrow(t.field(i).type)}"
                                    for i in range(t.num_fields)) + ">"
    text = str(t)
    return _ARROW.get(text, text)


def from_delta(t: Any) -> str:
    """Spark's name of a type in a delta log's JSON schema: a name, or {"type": array|map|struct, …}."""
    if isinstance(t, str):
        name = t.strip()
        if name.startswith("decimal"):
            return name.replace(" ", "")
        return _DELTA.get(name, name)
    if not isinstance(t, dict):
        return "?"
    kind = t.get("type")
    if kind == "array":
        return f"array<{from_delta(t.get('elementType'))}>"
    if kind == "map":
        return f"map<{from_delta(t.get('keyType'))},{from_delta(t.get('valueType'))}>"
    if kind == "struct":
        raw = t.get("fields")
        fields: list[Any] = raw if isinstance(raw, list) else []
        return "struct<" + ",".join(f"{f.get('name')}:{from_delta(f.get('type'))}"
                                    for f in fields if isinstance(f, dict)) + ">"
    return str(kind) if isinstance(kind, str) else "?"


def columns(schema: Any) -> list[dict[str, str]]:
    """[{"name", "type"}] of a pyarrow Schema, the types in Spark's names."""
    return [{"name": f.name, "type": from_arrow(f.type)} for f in schema]
