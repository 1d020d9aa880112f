"""One type vocabulary: Arrow types (every engine) and delta logs' JSON schema in Spark's names."""
from __future__ import annotations

import pyarrow as pa
import pytest

from console.coltypes import from_arrow, from_delta


@pytest.mark.parametrize(("arrow", "spark"), [
    (pa.int8(), "tinyint"), (pa.int16(), "smallint"), (pa.int32(), "int"), (pa.int64(), "bigint"),
    (pa.uint8(), "smallint"), (pa.uint32(), "bigint"), (pa.uint64(), "decimal(20,0)"),
    (pa.float32(), "float"), (pa.float64(), "double"), (pa.bool_(), "boolean"), (pa.null(), "void"),
    (pa.string(), "string"), (pa.large_string(), "string"), (pa.binary(), "binary"), (pa.binary(16), "binary"),
    (pa.decimal128(38, 0), "decimal(38,0)"), (pa.decimal128(3, 1), "decimal(3,1)"),
    (pa.date32(), "date"), (pa.timestamp("us", "UTC"), "timestamp"), (pa.timestamp("ns"), "timestamp_ntz"),
    (pa.list_(pa.int64()), "array<bigint>"), (pa.large_list(pa.large_string()), "array<string>"),
    (pa.struct([("a", pa.int32()), ("b", pa.list_(pa.float64()))]), "struct<a:int,b:array<double>>"),
    (pa.map_(pa.string(), pa.int64()), "map<string,bigint>"), (pa.dictionary(pa.int32(), pa.string()), "string"),
    (pa.duration("s"), "interval day to second"),
])
def test_arrow_types_in_sparks_names(arrow: pa.DataType, spark: str) -> None:
    assert from_arrow(arrow) == spark


def test_delta_log_types_in_sparks_sql_names() -> None:
    assert [from_delta(t) for t in ("integer", "long", "short", "byte", "string", "decimal(38, 0)",
                                    "timestamp_ntz")] == ["int", "bigint", "smallint", "tinyint", "string",
                                                          "decimal(38,0)", "timestamp_ntz"]
    nested = {"type": "struct", "fields": [{"name": "xs", "type": {"type": "array", "elementType": "long"}},
                                           {"name": "m", "type": {"type": "map", "keyType": "string",
                                                                  "valueType": "integer"}}]}
    assert from_delta(nested) == "struct<xs:array<bigint>,m:map<string,int>>"
    assert from_delta(5) == "?" and from_delta({"type": 3}) == "?"
