"""`predict t as <Algorithm>.`path`` and `register <Algorithm>.`path` as f`: a saved model applied.

predict appends Byzer's columns: `probability` (array<double>) and `prediction` for classifiers,
`prediction` for regressors and KMeans. The registered function returns what Byzer's does: the
probability vector for a classifier (so `vec_argmax(f(features))` is the class), the prediction
for a regressor, the cluster for KMeans.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost
from console.kernel.ml import estimators, models
from console.kernel.ml.estimators import CLASSIFIER, CLUSTERING, Algorithm
from console.kernel.ml.train import check_column


def predict(session: SessionHost, stmt: lang.Run, alg: Algorithm, run: CellRun) -> None:
    table = session.require(stmt.input, stmt)
    loaded = models.load(session.source_context(), stmt.path, alg.name, dict(stmt.options))
    fcol = stmt.options.get("featuresCol") or loaded.group["params"].get("featuresCol", "features")
    check_column(table, fcol, "the features", stmt.input, stmt)
    try:
        x = estimators.matrix(table.column(fcol))
        proba, pred = estimators.predict_arrays(loaded.model, alg.kind, x)
    except ValueError as exc:
        raise CellError("data", f"cannot predict with the model at {stmt.path}: column {fcol!r}: {exc}",
                        stmt.line, stmt.column) from None
    out = table
    columns: list[tuple[str, pa.Array]] = []
    if proba is not None:
        columns.append(("probability", _vectors(proba)))
    columns.append(("prediction", pa.array(pred, pa.int32() if alg.kind == CLUSTERING else _label_type(pred))))
    for name, values in columns:
        if name in out.column_names:
            out = out.drop_columns([name])
        out = out.append_column(name, values)
    if stmt.output:
        session.put(stmt.output, out, run)
    else:
        run.show(f"predict_{alg.name}", out)


def register(session: SessionHost, stmt: lang.Register, alg: Algorithm, run: CellRun) -> None:
    loaded = models.load(session.source_context(), stmt.path, alg.name, dict(stmt.options))
    model, kind = loaded.model, alg.kind

    def apply(features: Any) -> pa.Array:
        features = features.combine_chunks() if isinstance(features, pa.ChunkedArray) else features
        valid = features.is_valid()
        given = features.filter(valid)
        n = len(features)
        if len(given) == 0:
            return pa.nulls(n, return_type)
        proba, pred = estimators.predict_arrays(model, kind, estimators.matrix(given))
        values = _vectors(proba) if proba is not None else pa.array(pred, return_type)
        if len(given) == n:
            return values
        # rows without features get null, in their place
        index = np.cumsum(np.asarray(valid.to_numpy(zero_copy_only=False))) - 1
        taken = values.take(pa.array(np.clip(index, 0, None)))
        return pa.compute.if_else(valid, taken, pa.nulls(n, return_type))

    return_type: pa.DataType = {CLASSIFIER: pa.list_(pa.float64()), CLUSTERING: pa.int32()}.get(kind, pa.float64())
    sql_type = {CLASSIFIER: "DOUBLE[]", CLUSTERING: "INTEGER"}.get(kind, "DOUBLE")
    import pyarrow.compute  # noqa: F401  (pa.compute above)

    session.sql.register_function(stmt.function, apply, ["DOUBLE[]"], sql_type)
    group = loaded.group
    text = (f"register {alg.name}: {stmt.function}(features) uses version {loaded.version}, "
            f"group {group['algIndex']} of {stmt.path}\n")
    from console.wire.cell import Output

    session.emit(Output(text=text, source="engine", stream="system"))


def _vectors(rows: np.ndarray) -> pa.Array:
    width = rows.shape[1]
    offsets = pa.array(np.arange(0, (len(rows) + 1) * width, width, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(rows.astype(np.float64).ravel()))


def _label_type(pred: np.ndarray) -> pa.DataType:
    # Spark's labels are doubles; keep strings as strings.
    return pa.float64() if np.issubdtype(np.asarray(pred).dtype, np.number) else pa.string()
