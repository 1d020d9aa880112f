"""SQL functions every session has: Byzer's vector functions (vec_dense, vec_argmax, …) over DOUBLE[].

Byzer's vectors are Spark ML vectors; here a vector is simply DOUBLE[] (Arrow list<double>), so
vec_dense and vec_array are the identity and the others work on any DOUBLE[] column. Each is an
Arrow function (one call per batch); a NULL vector gives NULL. Indices are 0-based, as in Spark.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa

VEC = "DOUBLE[]"


@dataclass(frozen=True)
class VecFunction:
    name: str
    params: list[str]
    returns: str
    doc: str
    example: str
    fn: Callable[..., Any]


def _plain(a: Any) -> pa.Array:
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


def _rows(a: Any) -> list[np.ndarray | None]:
    """Each list of a list<double> array as a float array (None for a NULL list)."""
    a = _plain(a)
    if not (pa.types.is_list(a.type) or pa.types.is_large_list(a.type)):
        a = a.cast(pa.list_(pa.float64()))
    offsets = np.asarray(a.offsets)
    values = a.values.to_numpy(zero_copy_only=False).astype(np.float64)
    valid = a.is_valid().to_numpy(zero_copy_only=False)
    return [values[offsets[i]:offsets[i + 1]] if valid[i] else None for i in range(len(a))]


def _vectors(rows: list[np.ndarray | None]) -> pa.Array:
    return pa.array([None if r is None else r.tolist() for r in rows], pa.list_(pa.float64()))


def _per_row(f: Callable[[np.ndarray], Any], type_: pa.DataType) -> Callable[[Any], pa.Array]:
    def apply(a: Any) -> pa.Array:
        return pa.array([None if r is None or len(r) == 0 else f(r) for r in _rows(a)], type_)
    return apply


def _map(f: Callable[[np.ndarray], np.ndarray]) -> Callable[[Any], pa.Array]:
    def apply(a: Any) -> pa.Array:
        return _vectors([None if r is None else f(r) for r in _rows(a)])
    return apply


def _pairwise(f: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[Any, Any], pa.Array]:
    def apply(a: Any, b: Any) -> pa.Array:
        out: list[np.ndarray | None] = []
        for x, y in zip(_rows(a), _rows(b), strict=True):
            if x is None or y is None:
                out.append(None)
            elif len(x) != len(y):
                raise ValueError(f"vectors of different lengths: {len(x)} and {len(y)}")
            else:
                out.append(f(x, y))
        return _vectors(out)
    return apply


def _with_scalar(f: Callable[[np.ndarray, float], np.ndarray]) -> Callable[[Any, Any], pa.Array]:
    def apply(a: Any, s: Any) -> pa.Array:
        scalars = _plain(s).to_pylist()
        rows = zip(_rows(a), scalars, strict=True)
        return _vectors([None if r is None or k is None else f(r, float(k)) for r, k in rows])
    return apply


def _concat(a: Any) -> pa.Array:
    """vec_concat(array(v1, v2, …)): one vector of the vectors of each row, in order."""
    a = _plain(a)
    out: list[list[float] | None] = []
    for row in a.to_pylist():
        out.append(None if row is None or any(v is None for v in row) else [x for v in row for x in v])
    return pa.array(out, pa.list_(pa.float64()))


def _slice(a: Any, idx: Any) -> pa.Array:
    picks = _plain(idx).to_pylist()
    out: list[np.ndarray | None] = []
    for r, p in zip(_rows(a), picks, strict=True):
        if r is None or p is None:
            out.append(None)
        else:
            bad = [i for i in p if not -len(r) <= i < len(r)]
            if bad:
                raise ValueError(f"vec_slice: index {bad[0]} is outside a vector of {len(r)}")
            out.append(r[list(p)])
    return _vectors(out)


def _cosine(a: Any, b: Any) -> pa.Array:
    out: list[float | None] = []
    for x, y in zip(_rows(a), _rows(b), strict=True):
        norm = 0.0 if x is None or y is None else float(np.linalg.norm(x) * np.linalg.norm(y))
        out.append(None if x is None or y is None or norm == 0 else float(x @ y) / norm)
    return pa.array(out, pa.float64())


def _identity(a: Any) -> pa.Array:
    a = _plain(a)
    return a if a.type == pa.list_(pa.float64()) else a.cast(pa.list_(pa.float64()))


FUNCTIONS: list[VecFunction] = [
    VecFunction("vec_dense", [VEC], VEC, "a vector from an array of numbers", "vec_dense(array(1.0, 2.0))",
                _identity),
    VecFunction("vec_array", [VEC], VEC, "the vector's values as an array", "vec_array(features)", _identity),
    VecFunction("vec_argmax", [VEC], "INTEGER", "index of the largest value (0-based)",
                "vec_argmax(f(features))", _per_row(lambda r: int(np.argmax(r)), pa.int32())),
    VecFunction("vec_concat", ["DOUBLE[][]"], VEC, "the vectors of an array joined into one",
                "vec_concat(array(a, b))", _concat),
    VecFunction("vec_slice", [VEC, "INTEGER[]"], VEC, "the values at the given indices",
                "vec_slice(features, array(0, 2))", _slice),
    VecFunction("vec_cosine", [VEC, VEC], "DOUBLE", "cosine similarity of two vectors",
                "vec_cosine(a, b)", _cosine),
    VecFunction("vec_mean", [VEC], "DOUBLE", "mean of the values", "vec_mean(features)",
                _per_row(lambda r: float(r.mean()), pa.float64())),
    VecFunction("vec_sum", [VEC], "DOUBLE", "sum of the values", "vec_sum(features)",
                _per_row(lambda r: float(r.sum()), pa.float64())),
    VecFunction("vec_max", [VEC], "DOUBLE", "largest value", "vec_max(features)",
                _per_row(lambda r: float(r.max()), pa.float64())),
    VecFunction("vec_min", [VEC], "DOUBLE", "smallest value", "vec_min(features)",
                _per_row(lambda r: float(r.min()), pa.float64())),
    VecFunction("vec_norm", [VEC], "DOUBLE", "Euclidean (L2) norm", "vec_norm(features)",
                _per_row(lambda r: float(np.linalg.norm(r)), pa.float64())),
    VecFunction("vec_wise_add", [VEC, VEC], VEC, "element-wise sum", "vec_wise_add(a, b)", _pairwise(np.add)),
    VecFunction("vec_wise_dif", [VEC, VEC], VEC, "element-wise difference", "vec_wise_dif(a, b)",
                _pairwise(np.subtract)),
    VecFunction("vec_wise_mul", [VEC, VEC], VEC, "element-wise product", "vec_wise_mul(a, b)",
                _pairwise(np.multiply)),
    VecFunction("vec_wise_div", [VEC, VEC], VEC, "element-wise quotient", "vec_wise_div(a, b)",
                _pairwise(np.divide)),
    VecFunction("vec_inplace_add", [VEC, "DOUBLE"], VEC, "a number added to every value",
                "vec_inplace_add(features, 1.0)", _with_scalar(lambda r, k: r + k)),
    VecFunction("vec_inplace_ew_mul", [VEC, "DOUBLE"], VEC, "every value times a number",
                "vec_inplace_ew_mul(features, 2.0)", _with_scalar(lambda r, k: r * k)),
    VecFunction("vec_ceil", [VEC], VEC, "each value rounded up", "vec_ceil(features)", _map(np.ceil)),
    VecFunction("vec_floor", [VEC], VEC, "each value rounded down", "vec_floor(features)", _map(np.floor)),
]


def install(sql: Any) -> None:
    """Register the functions on a new SqlEngine (console.kernel.sql.SqlEngine.register_function)."""
    for f in FUNCTIONS:
        sql.register_function(f.name, f.fn, list(f.params), f.returns)
