"""`pyjava.serializers`: the framing MLSQL's Spark JVM and its Python workers spoke.

There is no JVM here: a cell's input and output are Arrow tables exchanged with the kernel, so
the serializers exist only so that old imports work; using one says what to call instead.
"""
from __future__ import annotations

from pyjava._gone import gone

_INSTEAD = ("context.fetch_once_as_rows() / RayContext.collect_arrow(server) to read and "
            "context.build_result(rows) (or set_output with an Arrow table) to write")


class SpecialLengths:
    """The stream markers of MLSQL's worker protocol (constants only, kept for old imports)."""

    END_OF_DATA_SECTION = -1
    PYTHON_EXCEPTION_THROWN = -2
    TIMING_DATA = -3
    END_OF_STREAM = -4
    NULL = -5
    START_ARROW_STREAM = -6
    READ_SCHEMA = -7


_WAS = "part of the Arrow stream protocol between Spark's JVM and the Python worker"
ArrowStreamSerializer = gone(__name__, "ArrowStreamSerializer", _WAS, _INSTEAD)
ArrowStreamPandasSerializer = gone(__name__, "ArrowStreamPandasSerializer", _WAS, _INSTEAD)
ArrowStreamPandasUDFSerializer = gone(__name__, "ArrowStreamPandasUDFSerializer", _WAS, _INSTEAD)
ArrowCollectSerializer = gone(__name__, "ArrowCollectSerializer", _WAS, _INSTEAD)
PickleSerializer = gone(__name__, "PickleSerializer", _WAS, _INSTEAD)
UTF8Deserializer = gone(__name__, "UTF8Deserializer", _WAS, _INSTEAD)

__all__ = ["ArrowCollectSerializer", "ArrowStreamPandasSerializer", "ArrowStreamPandasUDFSerializer",
           "ArrowStreamSerializer", "PickleSerializer", "SpecialLengths", "UTF8Deserializer"]
