"""`pyjava.api.serve`: the Ray actors MLSQL started to serve a cell's data back to Spark.

Here `ray_context.foreach(f)` / `map_iter(f)` run the function on Ray next to each partition and
hand the rows to the kernel themselves, so there is no data server to start by hand.
"""
from __future__ import annotations

from pyjava._gone import gone

RayDataServer = gone(
    __name__, "RayDataServer",
    "the Ray actor that served one partition of a dataMode=data cell's result back to Spark",
    "ray_context.foreach(func_for_row) or ray_context.map_iter(func_for_rows), which run on Ray "
    "per partition and return their rows to the notebook")

__all__ = ["RayDataServer"]
