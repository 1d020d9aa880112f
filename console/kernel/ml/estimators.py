"""Byzer's algorithm names over scikit-learn: building estimators, fitting one fitParam group, metrics.

This module imports only the standard library, numpy, pyarrow and scikit-learn, and nothing of
the console: train.py ships its source text as the code of a Python job, so the cell worker (a Ray
driver) can fit several groups as Ray tasks with the very same functions the kernel uses for one.
"""
from __future__ import annotations

import datetime as dt
import json
import pickle
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyarrow as pa

CLASSIFIER, REGRESSOR, CLUSTERING = "classifier", "regressor", "clustering"


@dataclass(frozen=True)
class Param:
    """A Byzer parameter: its sklearn name and how the string value becomes sklearn's value."""
    sk: str
    doc: str
    convert: Callable[[str], Any] = float


@dataclass(frozen=True)
class Algorithm:
    name: str
    kind: str
    estimator: str  # "module.Class" of scikit-learn
    doc: str
    params: dict[str, Param] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)  # Spark's defaults, so results resemble Byzer's


def _int(v: str) -> int:
    return int(float(v))


def _bool(v: str) -> bool:
    return v.strip().lower() in ("true", "1", "yes")


def _inverse(v: str) -> float:
    return 1 / float(v) if float(v) else np.inf  # sklearn's C is Spark's 1/regParam


def _subset(v: str) -> Any:
    v = v.strip().lower()
    return {"auto": "sqrt", "all": None, "onethird": 1 / 3}.get(v, v if v in ("sqrt", "log2") else float(v))


_SEED = Param("random_state", "random seed", _int)
_TREES = {
    "maxDepth": Param("max_depth", "maximum depth of each tree", _int),
    "minInstancesPerNode": Param("min_samples_leaf", "minimum rows in a leaf", _int),
    "seed": _SEED,
}
ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in [
    Algorithm("RandomForest", CLASSIFIER, "sklearn.ensemble.RandomForestClassifier",
              "random forest classifier", {
                  **_TREES, "numTrees": Param("n_estimators", "number of trees", _int),
                  "featureSubsetStrategy": Param("max_features", "features per split: auto, all, sqrt, log2, 0.5",
                                                 _subset),
                  "impurity": Param("criterion", "gini or entropy", str)},
              {"n_estimators": 20, "max_depth": 5}),
    Algorithm("LogisticRegression", CLASSIFIER, "sklearn.linear_model.LogisticRegression",
              "logistic regression (multinomial when there are more than two classes)", {
                  "maxIter": Param("max_iter", "maximum iterations", _int),
                  "regParam": Param("C", "regularization strength (0: none)", _inverse),
                  "elasticNetParam": Param("l1_ratio", "0 = L2, 1 = L1 penalty", float),
                  "fitIntercept": Param("fit_intercept", "fit an intercept", _bool),
                  "tol": Param("tol", "convergence tolerance", float)},
              {"C": np.inf, "max_iter": 100}),
    Algorithm("NaiveBayes", CLASSIFIER, "sklearn.naive_bayes.MultinomialNB",
              "naive Bayes (modelType multinomial, bernoulli or gaussian)", {
                  "smoothing": Param("alpha", "additive smoothing", float),
                  "modelType": Param("", "multinomial, bernoulli or gaussian", str)}),
    Algorithm("GBTs", CLASSIFIER, "sklearn.ensemble.GradientBoostingClassifier",
              "gradient-boosted trees classifier", {
                  **_TREES, "maxIter": Param("n_estimators", "boosting rounds", _int),
                  "stepSize": Param("learning_rate", "learning rate", float),
                  "subsamplingRate": Param("subsample", "fraction of rows per round", float)},
              {"n_estimators": 20, "max_depth": 5}),
    Algorithm("LinearRegression", REGRESSOR, "sklearn.linear_model.LinearRegression",
              "linear regression (ElasticNet when regParam > 0)", {
                  "regParam": Param("alpha", "regularization strength (0: none)", float),
                  "elasticNetParam": Param("l1_ratio", "0 = L2, 1 = L1 penalty", float),
                  "fitIntercept": Param("fit_intercept", "fit an intercept", _bool),
                  "maxIter": Param("max_iter", "maximum iterations (with regParam)", _int)}),
    Algorithm("GBTRegressor", REGRESSOR, "sklearn.ensemble.GradientBoostingRegressor",
              "gradient-boosted trees regressor", {
                  **_TREES, "maxIter": Param("n_estimators", "boosting rounds", _int),
                  "stepSize": Param("learning_rate", "learning rate", float),
                  "subsamplingRate": Param("subsample", "fraction of rows per round", float)},
              {"n_estimators": 20, "max_depth": 5}),
    Algorithm("KMeans", CLUSTERING, "sklearn.cluster.KMeans", "k-means clustering (no label column)", {
        "k": Param("n_clusters", "number of clusters", _int),
        "maxIter": Param("max_iter", "maximum iterations", _int),
        "tol": Param("tol", "convergence tolerance", float),
        "seed": _SEED}, {"n_clusters": 2, "max_iter": 20, "n_init": "auto"}),
]}
# Options every algorithm reads (besides its own parameters); none goes to scikit-learn.
COMMON = {"featuresCol": "the array<double> feature column (default features)",
          "labelCol": "the label column (default label)",
          "keepVersion": "keep every training as a new _model_N version (default true)",
          "evaluateTable": "table the metrics are computed on",
          "autoSelectByMetric": "predict/register: the group with the best value of this metric",
          "algIndex": "predict/register: the fitParam group to use",
          "modelVersion": "predict/register: the _model_N version to use (default the latest)"}
NB_MODELS = {"multinomial": "MultinomialNB", "bernoulli": "BernoulliNB", "gaussian": "GaussianNB"}


def build(alg: Algorithm, params: dict[str, str]) -> Any:
    """The unfitted estimator for Byzer-named params; unknown names raise ValueError naming the known."""
    import importlib

    module, _, cls = alg.estimator.rpartition(".")
    kwargs: dict[str, Any] = dict(alg.defaults)
    for key, value in params.items():
        if key in COMMON:
            continue
        p = alg.params.get(key)
        if p is None:
            known = ", ".join(sorted(alg.params)) or "none"
            raise ValueError(f"{alg.name} has no parameter {key!r}; its parameters: {known}")
        if p.sk == "":  # NaiveBayes modelType picks the class
            if value not in NB_MODELS:
                raise ValueError(f"modelType {value!r}: use one of {', '.join(NB_MODELS)}")
            cls = NB_MODELS[value]
            continue
        try:
            kwargs[p.sk] = p.convert(value)
        except ValueError:
            raise ValueError(f"{key}={value!r} is not a valid value ({p.doc})") from None
    if alg.name == "LinearRegression" and kwargs.get("alpha"):
        cls = "ElasticNet"
    elif alg.name == "LinearRegression":
        kwargs = {k: v for k, v in kwargs.items() if k == "fit_intercept"}
    if cls == "GaussianNB":
        kwargs.pop("alpha", None)
    return getattr(importlib.import_module(module), cls)(**kwargs)


def matrix(column: Any) -> np.ndarray:
    """Rows of an array<double> column (or one numeric column) as a 2-D float matrix."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        raise ValueError(f"{column.null_count} row(s) have no value")
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type) or \
            pa.types.is_fixed_size_list(column.type):
        lengths = np.asarray(column.value_lengths())
        if len(lengths) and (lengths != lengths[0]).any():
            raise ValueError(f"vectors of different lengths ({lengths.min()} to {lengths.max()})")
        width = int(lengths[0]) if len(lengths) else 0
        flat = column.flatten().cast(pa.float64()).to_numpy(zero_copy_only=False)
        return flat.reshape(len(column), width)
    return column.cast(pa.float64()).to_numpy(zero_copy_only=False).reshape(-1, 1)


def predict_arrays(model: Any, kind: str, x: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """(probability rows for classifiers else None, prediction) for a feature matrix."""
    if kind == CLASSIFIER:
        proba = model.predict_proba(x)
        return proba, np.asarray(model.classes_)[proba.argmax(axis=1)]
    return None, model.predict(x)


def metrics(model: Any, kind: str, x: np.ndarray, y: np.ndarray | None) -> dict[str, float]:
    """Byzer's evaluator figures: f1/weightedPrecision/weightedRecall/accuracy, rmse/mse/mae/r2, silhouette."""
    from sklearn import metrics as m  # type: ignore[import-untyped]

    _, pred = predict_arrays(model, kind, x)
    if kind == CLASSIFIER and y is not None:
        return {"f1": float(m.f1_score(y, pred, average="weighted", zero_division=0)),
                "weightedPrecision": float(m.precision_score(y, pred, average="weighted", zero_division=0)),
                "weightedRecall": float(m.recall_score(y, pred, average="weighted", zero_division=0)),
                "accuracy": float(m.accuracy_score(y, pred))}
    if kind == REGRESSOR and y is not None:
        mse = float(m.mean_squared_error(y, pred))
        return {"rmse": mse ** 0.5, "mse": mse, "mae": float(m.mean_absolute_error(y, pred)),
                "r2": float(m.r2_score(y, pred))}
    if kind == CLUSTERING and 1 < len(set(pred.tolist())) < len(pred):
        return {"silhouette": float(m.silhouette_score(x, pred))}
    return {}


def _stamp(t: float) -> str:
    return dt.datetime.fromtimestamp(t).strftime("%Y%m%d %H:%M:%S:%f")[:-3]


def fit_group(name: str, index: int, params: dict[str, str], train: pa.Table,
              evaluate: pa.Table | None) -> dict[str, Any]:
    """Fit one fitParam group; never raises: a failure is status/message, as in Byzer's result."""
    import warnings

    start = time.time()
    out: dict[str, Any] = {"algIndex": index, "status": "success", "message": "", "metrics": "{}",
                           "model": b"", "startTime": _stamp(start), "params": json.dumps(params)}
    try:
        alg = ALGORITHMS[name]
        fcol, lcol = params.get("featuresCol", "features"), params.get("labelCol", "label")
        estimator = build(alg, params)
        x = _column_matrix(train, fcol)
        y = None if alg.kind == CLUSTERING else _labels(train, lcol)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter; the metrics tell how good it is
            model = estimator.fit(x) if y is None else estimator.fit(x, y)
            if evaluate is not None:
                ey = None if alg.kind == CLUSTERING else _labels(evaluate, lcol)
                out["metrics"] = json.dumps(metrics(model, alg.kind, _column_matrix(evaluate, fcol), ey))
        out["model"] = pickle.dumps(model)
    except Exception as exc:  # the group's own failure, reported in its status row
        out["status"], out["message"] = "fail", f"{type(exc).__name__}: {exc}"
    out["endTime"] = _stamp(time.time())
    return out


def _column_matrix(table: pa.Table, name: str) -> np.ndarray:
    try:
        return matrix(table.column(name))
    except ValueError as exc:
        raise ValueError(f"column {name!r}: {exc}") from None


def _labels(table: pa.Table, name: str) -> np.ndarray:
    column = table.column(name)
    if column.null_count:
        raise ValueError(f"label column {name!r}: {column.null_count} row(s) have no value")
    if pa.types.is_decimal(column.type) or pa.types.is_integer(column.type):
        column = column.cast(pa.float64())  # Spark's labels are doubles: 1 and 1.0 are one class
    return np.asarray(column.to_numpy())


def train_groups(name: str, groups: list[tuple[int, dict[str, str]]], table: pa.Table,
                 use_ray: bool) -> list[dict[str, Any]]:
    """Fit every group; table has the training rows and, where __eval__ is true, the evaluation rows."""
    mask = table.column("__eval__").to_numpy(zero_copy_only=False)
    train = table.filter(pa.array(~mask)).drop_columns(["__eval__"])
    evaluate = table.filter(pa.array(mask)).drop_columns(["__eval__"]) if mask.any() else None
    if not use_ray:
        return [fit_group(name, i, p, train, evaluate) for i, p in groups]
    import ray

    fit_remote = ray.remote(num_cpus=1)(fit_group)  # one task per group: they run side by side
    train_ref, eval_ref = ray.put(train), ray.put(evaluate)
    return list(ray.get([fit_remote.remote(name, i, p, train_ref, eval_ref) for i, p in groups]))


def results_table(results: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(results, schema=pa.schema([
        ("algIndex", pa.int64()), ("status", pa.string()), ("message", pa.string()), ("metrics", pa.string()),
        ("model", pa.binary()), ("startTime", pa.string()), ("endTime", pa.string()), ("params", pa.string())]))


def ray_job(context: Any) -> None:
    """The cell worker's side of a parallel `train`: groups as Ray tasks, results as the job's table."""
    from pyjava.api.mlsql import RayContext

    RayContext.connect(context, "local")  # this cell worker becomes a driver on the notebook's cluster
    conf = context.conf
    table = _input_table(context)
    groups = [(int(i), p) for i, p in json.loads(conf["__groups__"])]
    context.build_result(results_table(train_groups(conf["__algorithm__"], groups, table, use_ray=True)))


def _input_table(context: Any) -> pa.Table:
    batches = [pa.Table.from_pandas(df, preserve_index=False) for df in context.fetch_once()]
    return pa.concat_tables(batches) if batches else pa.table({})
