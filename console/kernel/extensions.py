"""`run t as <Extension>.`path` [where …] [as out]`: the extensions other than Ray and TableRepartition.

Each extension is a function of the input table and the statement's options that returns a
table. `catalog()` lists every extension and algorithm with its parameters (for `!show et`);
an unknown name is a CellError naming those that exist, with "did you mean" when one is close.
"""
from __future__ import annotations

import difflib
import io
import json
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost

Fn = Callable[[SessionHost, pa.Table | None, dict[str, str], lang.Run], pa.Table]


@dataclass(frozen=True)
class Extension:
    name: str
    doc: str
    params: dict[str, str]
    fn: Fn | None  # None: run by the session itself (Ray, TableRepartition)
    needs_input: bool = True


def unknown(kind: str, name: str, names: list[str], stmt: lang.Statement) -> CellError:
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6) or \
        [n for n in names if n.lower() == name.lower()]
    hint = f"; did you mean {close[0]}?" if close else ""
    return CellError("parse", f"unknown {kind} {name!r}{hint} ({kind}s: {', '.join(names)})",
                     *lang.template.position_in(stmt, name))


def _option(opts: dict[str, str], key: str, stmt: lang.Run, et: str) -> str:
    value = opts.get(key, "").strip()
    if not value:
        raise CellError("data", f"{et} needs {key}=\"…\"", stmt.line, stmt.column)
    return value


def _column(table: pa.Table, name: str, stmt: lang.Run, et: str) -> pa.ChunkedArray:
    if name not in table.column_names:
        close = difflib.get_close_matches(name, table.column_names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise CellError("data", f"{et}: no column {name!r} (columns: {', '.join(table.column_names)}){hint}",
                        *lang.template.position_in(stmt, name))
    return table.column(name)


# ---------------------------------------------------------------- the extensions
def rate_sampler(session: SessionHost, table: pa.Table | None, opts: dict[str, str], stmt: lang.Run) -> pa.Table:
    """__split__ = 0, 1, … by the sampleRate fractions, within each label value when labelCol is given."""
    assert table is not None
    try:
        rates = [float(r) for r in opts.get("sampleRate", "0.9,0.1").split(",")]
    except ValueError:
        raise CellError("data", f"RateSampler: sampleRate={opts['sampleRate']!r} is not numbers such as \"0.7,0.3\"",
                        *lang.template.position_in(stmt, "sampleRate")) from None
    bounds = np.cumsum(rates) / sum(rates)
    rng = np.random.default_rng(int(opts.get("seed", "42")))
    n = table.num_rows
    label = opts.get("labelCol")
    keys = _column(table, label, stmt, "RateSampler").to_pylist() if label else [0] * n
    split = np.zeros(n, dtype=np.int32)
    groups: dict[Any, list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    for rows in groups.values():  # exact fractions within each label, in a seeded random order
        order = rng.permutation(rows)
        cuts = np.floor(bounds * len(order) + 0.5).astype(int)
        split[order] = np.searchsorted(cuts, np.arange(len(order)), side="right")
    return table.append_column("__split__", pa.array(np.minimum(split, len(rates) - 1)))


def json_expand(session: SessionHost, table: pa.Table | None, opts: dict[str, str], stmt: lang.Run) -> pa.Table:
    """The JSON strings of inputCol as columns (structColumn="true": as one struct column of that name)."""
    import pyarrow.json as pj

    assert table is not None
    name = _option(opts, "inputCol", stmt, "JsonExpandExt")
    texts = [t if isinstance(t, str) and t.strip() else "{}" for t in _column(table, name, stmt, "JsonExpandExt")
             .cast(pa.string()).to_pylist()]
    for i, t in enumerate(texts):
        try:
            json.loads(t)
        except ValueError as exc:
            raise CellError("data", f"JsonExpandExt: row {i + 1} of {name!r} is not JSON: {exc}",
                            stmt.line, stmt.column) from None
    lines = "\n".join(json.dumps(json.loads(t)) for t in texts).encode()  # one object per line
    parsed = pj.read_json(io.BytesIO(lines)) if texts else pa.table({})
    rest = table.drop_columns([name])
    if opts.get("structColumn", "false").lower() == "true":
        return rest.append_column(name, pa.StructArray.from_arrays(
            [c.combine_chunks() for c in parsed.columns], names=parsed.column_names))
    for col in parsed.column_names:
        rest = rest.append_column(col if col not in rest.column_names else f"{name}_{col}", parsed.column(col))
    return rest


SUMMARY = ["columnName", "dataType", "uniqueValueRatio", "nullValueRatio", "blankValueRatio", "mean", "median",
           "mode", "standardDeviation", "standardError", "max", "min", "maximumLength", "minimumLength",
           "ordinalPosition", "primaryKeyCandidate", "nonNullCount", "%25", "%75"]


def data_summary(session: SessionHost, table: pa.Table | None, opts: dict[str, str], stmt: lang.Run) -> pa.Table:
    """One row per column of the input with Byzer's profile figures (as text, rounded at roundAt)."""
    assert table is not None
    digits = _round_at(opts, stmt)
    wanted = [m.strip() for m in opts.get("metrics", "").split(",") if m.strip()]
    wanted = [{"25%": "%25", "75%": "%75"}.get(m, m) for m in wanted]
    bad = [m for m in wanted if m not in SUMMARY]
    if bad:
        raise CellError("data", f"DataSummary: unknown metric {bad[0]!r}; metrics: {', '.join(SUMMARY)}",
                        *lang.template.position_in(stmt, bad[0]))
    columns = ["columnName"] + [m for m in (wanted or SUMMARY) if m != "columnName"]
    rows = [_profile(table, i, digits) for i in range(table.num_columns)]
    return pa.table({c: pa.array([r[c] for r in rows], pa.string()) for c in columns})


def _round_at(opts: dict[str, str], stmt: lang.Run) -> int:
    """DataSummary's decimals: `roundAt`, or `rountAt` as Byzer's DataSummary spells it."""
    given = {k: opts[k] for k in ("roundAt", "rountAt") if k in opts}
    if len(set(given.values())) > 1:
        raise CellError("data", "DataSummary: roundAt and rountAt (Byzer's spelling) differ; give one",
                        stmt.line, stmt.column)
    key, value = next(iter(given.items()), ("roundAt", "2"))
    try:
        digits = int(value.strip())
    except ValueError:
        digits = -1
    if digits < 0:
        raise CellError("data", f"DataSummary: {key}={value!r} is not a number of decimals such as \"4\"",
                        *lang.template.position_in(stmt, key))
    return digits


def _profile(table: pa.Table, index: int, digits: int) -> dict[str, str]:
    col, name, n = table.column(index), table.column_names[index], max(table.num_rows, 1)
    nonnull = col.drop_null()
    is_num = pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_decimal(col.type)

    def r(v: Any) -> str:
        return "" if v is None else str(round(float(v), digits))

    lengths = pc.utf8_length(nonnull.cast(pa.string())) if not pa.types.is_nested(col.type) else None
    distinct = len(pc.unique(nonnull)) if not pa.types.is_nested(col.type) else 0
    blank = int(pc.sum(pc.equal(pc.utf8_trim_whitespace(nonnull), "")).as_py() or 0) \
        if pa.types.is_string(col.type) else 0
    out = {"columnName": name, "dataType": str(col.type), "uniqueValueRatio": r(distinct / n),
           "nullValueRatio": r(col.null_count / n), "blankValueRatio": r(blank / n),
           "maximumLength": str(pc.max(lengths).as_py()) if lengths is not None and len(lengths) else "",
           "minimumLength": str(pc.min(lengths).as_py()) if lengths is not None and len(lengths) else "",
           "ordinalPosition": str(index + 1), "nonNullCount": str(len(nonnull)),
           "primaryKeyCandidate": "1" if distinct == table.num_rows and col.null_count == 0 else "0"}
    figures = dict.fromkeys(["mean", "median", "mode", "standardDeviation", "standardError", "max", "min",
                             "%25", "%75"], "")
    if is_num and len(nonnull):
        values = nonnull.cast(pa.float64())
        sd = pc.stddev(values, ddof=1).as_py() if len(values) > 1 else 0.0
        q = pc.quantile(values, q=[0.25, 0.5, 0.75]).to_pylist()
        figures.update(mean=r(pc.mean(values).as_py()), median=r(q[1]), standardDeviation=r(sd),
                       standardError=r((sd or 0.0) / len(values) ** 0.5), max=r(pc.max(values).as_py()),
                       min=r(pc.min(values).as_py()), mode=r(pc.mode(values)[0]["mode"].as_py()),
                       **{"%25": r(q[0]), "%75": r(q[2])})
    return {**out, **figures}


def describe(session: SessionHost, table: pa.Table | None, opts: dict[str, str], stmt: lang.Run) -> pa.Table:
    """Spark's describe(): count, mean, stddev, min, max of each column (as text)."""
    assert table is not None
    stats = ["count", "mean", "stddev", "min", "max"]
    out: dict[str, list[str | None]] = {"summary": list(stats)}
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_nested(col.type) or pa.types.is_binary(col.type):
            continue
        nonnull = col.drop_null()
        is_num = pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_decimal(col.type)
        values = nonnull.cast(pa.float64()) if is_num else None
        out[name] = [str(len(nonnull)),
                     str(pc.mean(values).as_py()) if values is not None and len(values) else None,
                     str(pc.stddev(values, ddof=1).as_py()) if values is not None and len(values) > 1 else None,
                     str(pc.min(nonnull).as_py()) if len(nonnull) else None,
                     str(pc.max(nonnull).as_py()) if len(nonnull) else None]
    return pa.table({k: pa.array(v, pa.string()) for k, v in out.items()})


def syntax_analyze(session: SessionHost, table: pa.Table | None, opts: dict[str, str], stmt: lang.Run) -> pa.Table:
    """action="extractTables": the tables a Spark SQL query reads (sqlglot), not its CTEs or aliases."""
    import sqlglot

    from console.kernel.sql import transpile

    action = opts.get("action", "extractTables")
    if action != "extractTables":
        raise CellError("data", f"SyntaxAnalyzeExt: action {action!r} is not supported; use extractTables",
                        *lang.template.position_in(stmt, action))
    # MLSQL's own "… as output;" ending reads as a table alias to sqlglot: harmless here.
    sql = _option(opts, "sql", stmt, "SyntaxAnalyzeExt").rstrip().rstrip(";")
    try:
        _, refs = transpile(sql)
    except sqlglot.errors.SqlglotError as exc:
        raise CellError("sql", f"SyntaxAnalyzeExt: the sql does not parse: {str(exc).splitlines()[0]}",
                        *lang.template.position_in(stmt, "sql")) from None
    ordered = sorted(refs, key=lambda r: (sql.lower().find(r.lower()), r))  # in the order the query names them
    return pa.table({"tableName": pa.array(ordered, pa.string())})


def confusion_matrix(session: SessionHost, table: pa.Table | None, opts: dict[str, str], stmt: lang.Run) -> pa.Table:
    """Counts of (actual, predicted) pairs: one row per actual value, one column per predicted value."""
    assert table is not None
    actual = _column(table, _option(opts, "actualCol", stmt, "ConfusionMatrix"), stmt, "ConfusionMatrix").to_pylist()
    predicted = _column(table, _option(opts, "predictCol", stmt, "ConfusionMatrix"), stmt,
                        "ConfusionMatrix").to_pylist()
    labels = sorted({str(v) for v in actual + predicted})
    counts = {(a, p): 0 for a in labels for p in labels}
    for a, p in zip(actual, predicted, strict=True):
        counts[(str(a), str(p))] += 1
    return pa.table({"act": labels, **{p: pa.array([counts[(a, p)] for a in labels], pa.int64()) for p in labels}})


def cache_ext(session: SessionHost, table: pa.Table | None, opts: dict[str, str], stmt: lang.Run) -> pa.Table:
    """Tables already live in the kernel's memory: caching is a no-op that returns the table."""
    assert table is not None
    return table


EXTENSIONS: dict[str, Extension] = {e.name: e for e in [
    Extension("Ray", "run Python code on the notebook's Ray cluster (see Python cells)",
              {"inputTable": "input table", "outputTable": "output table", "code": "the Python code",
               "model": "a model table handed to the code", "confTable": "a key/value table of conf"}, None),
    Extension("TableRepartition", "see the table as N partitions when Python reads it",
              {"partitionNum": "number of partitions"}, None),
    Extension("RateSampler", "mark rows for a train/test split: adds __split__ (0, 1, …)",
              {"sampleRate": "fractions, e.g. 0.7,0.3 (default 0.9,0.1)",
               "labelCol": "split within each value of this column",
               "isSplitWithSubLabel": "accepted; the split is always exact", "seed": "random seed (default 42)"},
              rate_sampler),
    Extension("JsonExpandExt", "expand a JSON string column into columns",
              {"inputCol": "the JSON column (required)", "samplingRatio": "accepted; every row is read",
               "structColumn": "true: one struct column instead of columns"}, json_expand),
    Extension("DataSummary", "profile every column: ratios, mean, quantiles, lengths …",
              {"metrics": "the figures to show, comma-separated (default all)",
               "roundAt": "decimals (default 2)", "rountAt": "the same, as Byzer spells it",
               "approxSwitch": "accepted; figures are exact"}, data_summary),
    Extension("Describe", "count, mean, stddev, min and max of each column", {}, describe),
    Extension("SyntaxAnalyzeExt", "the tables a SQL query reads",
              {"action": "extractTables", "sql": "the Spark SQL query"}, syntax_analyze, needs_input=False),
    Extension("ConfusionMatrix", "counts of actual against predicted values",
              {"actualCol": "the true value column", "predictCol": "the predicted value column"}, confusion_matrix),
    Extension("CacheExt", "accepted for Byzer scripts: tables already stay in memory",
              {"execute": "cache or uncache", "isEager": "accepted"}, cache_ext),
]}


def find(name: str) -> Extension | None:
    return EXTENSIONS.get(name) or next((e for k, e in EXTENSIONS.items() if k.lower() == name.lower()), None)


def catalog() -> list[dict[str, Any]]:
    """Every extension and algorithm: name, kind ("extension"|"algorithm"), doc, params [{name, doc}]."""
    from console.kernel.ml.estimators import ALGORITHMS, COMMON

    out = [{"name": e.name, "kind": "extension", "doc": e.doc,
            "params": [{"name": k, "doc": v} for k, v in e.params.items()]} for e in EXTENSIONS.values()]
    for a in ALGORITHMS.values():
        params = {**{k: p.doc for k, p in a.params.items()}, **COMMON,
                  "fitParam.N.<param>": "parameter groups fitted side by side as Ray tasks"}
        out.append({"name": a.name, "kind": "algorithm", "doc": f"{a.doc} ({a.estimator})",
                    "params": [{"name": k, "doc": v} for k, v in params.items()]})
    return out


def run_extension(session: SessionHost, stmt: lang.Run, run: CellRun) -> None:
    ext = find(stmt.et)
    if ext is None or ext.fn is None:
        from console.kernel.ml.estimators import ALGORITHMS

        if ext is None and stmt.et.lower() in {a.lower() for a in ALGORITHMS}:
            raise CellError("parse", f"{stmt.et} is an algorithm: use train (or predict) instead of run",
                            stmt.line, stmt.column)
        raise unknown("extension", stmt.et, sorted(EXTENSIONS), stmt)
    no_input = stmt.input.lower() == "command" or not ext.needs_input
    if no_input and ext.needs_input:
        raise CellError("data", f"{ext.name} needs an input table, not command", stmt.line, stmt.column)
    table = None if no_input else session.require(stmt.input, stmt)
    try:
        result = ext.fn(session, table, dict(stmt.options), stmt)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise CellError("data", f"{ext.name}: {exc}", stmt.line, stmt.column) from None
    name = stmt.output
    if name and name.lower() != "command":
        session.put(name, result, run)
    else:
        run.show(ext.name, result)
