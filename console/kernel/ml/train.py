"""`train t as <Algorithm>.`path` where fitParam.N.k="v" …`: fit, evaluate, save, and Byzer's result table.

One group is fitted here in the kernel. Several are fitted side by side as Ray tasks: the kernel
is not a Ray driver, so the training becomes a Python job (console/kernel/job.py) whose code is the
source of estimators.py, run by the cell worker, which hands each group to a Ray task.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost
from console.kernel.ml import estimators, models
from console.kernel.ml.estimators import Algorithm
from console.wire.cell import Output

_GROUP = re.compile(r"fitParam\.(\d+)\.(.+)$")
# Options about the run itself, not about fitting: never passed to scikit-learn.
CONTROL = ("keepVersion", "evaluateTable", "autoSelectByMetric", "algIndex", "modelVersion")


def groups_of(options: dict[str, str]) -> list[tuple[int, dict[str, str]]]:
    """fitParam.N.* groups, each over the statement's other options; none given = one group 0."""
    base = {k: v for k, v in options.items() if not _GROUP.match(k) and k not in CONTROL}
    groups: dict[int, dict[str, str]] = {}
    for key, value in options.items():
        m = _GROUP.match(key)
        if m:
            groups.setdefault(int(m.group(1)), dict(base))[m.group(2)] = value
    return sorted(groups.items()) or [(0, base)]


def check_column(table: pa.Table, name: str, role: str, table_name: str, stmt: lang.Statement) -> None:
    if name in table.column_names:
        return
    import difflib

    close = difflib.get_close_matches(name, table.column_names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise CellError("data", f"{role} column {name!r} is not in table {table_name!r} "
                            f"(columns: {', '.join(table.column_names)}){hint}",
                    *lang.template.position_in(stmt, name))


def train(session: SessionHost, stmt: lang.Run, alg: Algorithm, run: CellRun) -> None:
    opts = dict(stmt.options)
    table = session.require(stmt.input, stmt)
    groups = groups_of(opts)
    for _, params in groups:  # bad parameter names fail now, before anything is fitted
        try:
            estimators.build(alg, params)
        except ValueError as exc:
            raise CellError("data", str(exc), *lang.template.position_in(stmt, str(exc).split("'")[1]
                                                                         if "'" in str(exc) else alg.name)) from None
    needed: list[str] = []
    for _, params in groups:
        needed.append(params.get("featuresCol", "features"))
        if alg.kind != estimators.CLUSTERING:
            needed.append(params.get("labelCol", "label"))
    needed = list(dict.fromkeys(needed))
    evaluate_name = opts.get("evaluateTable")
    parts = [_part(table, needed, stmt.input, False, stmt)]
    if evaluate_name:
        evaluate = session.require(evaluate_name, stmt)
        parts.append(_part(evaluate, needed, evaluate_name, True, stmt).cast(parts[0].schema))
    job_table = pa.concat_tables(parts)
    if len(groups) > 1:
        session.emit(Output(text=f"train {alg.name}: {len(groups)} fitParam groups as Ray tasks\n",
                                 source="engine", stream="system"))
        results = _train_on_ray(session, stmt, alg, groups, job_table)
    else:
        results = estimators.train_groups(alg.name, groups, job_table, use_ray=False)
    keep = opts.get("keepVersion", "true").strip().lower() != "false"
    meta: dict[str, Any] = {"algorithm": alg.name, "kind": alg.kind, "estimator": alg.estimator,
            "created": dt.datetime.now().isoformat(timespec="seconds"),
            "columns": [{"name": f.name, "type": str(f.type)} for f in table.schema],
            "groups": [{"algIndex": r["algIndex"], "status": r["status"], "message": r["message"],
                        "metrics": json.loads(r["metrics"] or "{}"), "params": json.loads(r["params"]),
                        "startTime": r["startTime"], "endTime": r["endTime"]} for r in results]}
    blobs = {r["algIndex"]: r["model"] for r in results if r["status"] == "success"}
    folder, _ = models.save(session.source_context(), stmt.path, keep, meta, blobs)
    from console.sources.paths import shown

    _record_model(session, stmt, run, shown(session.source_context(), folder))
    out = result_table(alg, meta["groups"], shown(session.source_context(), folder))  # lake:…, not the server's path
    if stmt.output:
        session.put(stmt.output, out, run)
    else:
        run.show(f"train_{alg.name}", out)


def _record_model(session: SessionHost, stmt: lang.Run, run: CellRun, where: str) -> None:
    """The model folder in the run's manifest, trained by this run from what its input came from."""
    from console.kernel import provenance
    from console.wire.kernel import ManifestEntry

    made = provenance.merge(provenance.lookup(session.derived, run.reads))
    written = ManifestEntry("write", "model", where[:4096], statement=run.io.statement, line=max(0, stmt.line))
    run.io.add(provenance.on_write(written, dataclasses.replace(made, model=True, trained_by=run.run_id)))


def _part(table: pa.Table, needed: list[str], name: str, is_eval: bool, stmt: lang.Statement) -> pa.Table:
    for column in needed:
        check_column(table, column, "the", name, stmt)
    part = table.select(needed)
    return part.append_column("__eval__", pa.array([is_eval] * part.num_rows, pa.bool_()))


def _train_on_ray(session: SessionHost, stmt: lang.Run, alg: Algorithm, groups: list[tuple[int, dict[str, str]]],
                  table: pa.Table) -> list[dict[str, Any]]:
    from console.kernel.job import PythonCellError, PythonJob

    source = Path(estimators.__file__).read_text(encoding="utf-8")
    source = source.replace("from __future__ import annotations\n", "", 1)
    # The worker is reused while pythonExec and the env stay the same: keep the session's.
    conf = {k: v for k, v in session.python_conf.items() if k != "schema"}
    conf.update({"__algorithm__": alg.name, "__groups__": json.dumps(groups)})
    job = PythonJob(code=source + "\nray_job(context)\n", conf=conf, env=dict(session.python_env),
                    input_name=stmt.input, input_table=table, code_line=1)
    try:
        result = session.python_runtime().run(job)
    except PythonCellError as exc:
        raise CellError(exc.kind, f"training {alg.name} on Ray failed: {exc.message}", stmt.line, stmt.column,
                        exc.traceback) from None
    if result is None:
        raise CellError("python", f"training {alg.name} on Ray returned no result", stmt.line, stmt.column)
    return list(result.to_pylist())


def result_table(alg: Algorithm, groups: list[dict[str, Any]], folder: str) -> pa.Table:
    """Byzer's answer to train: name/value rows, one block per group."""
    names: list[str] = []
    values: list[str] = []
    for g in groups:
        params = ", ".join(f"{k} -> {v}" for k, v in g["params"].items())
        rows = [("modelPath", f"{folder}/model/{g['algIndex']}"), ("algIndex", str(g["algIndex"])),
                ("alg", alg.estimator), ("metrics", " ".join(f"{k}: {v}" for k, v in g["metrics"].items())),
                ("status", g["status"]), ("message", g["message"]), ("startTime", g["startTime"]),
                ("endTime", g["endTime"]), ("trainParams", f"Map({params})")]
        names += [n for n, _ in rows]
        values += [v for _, v in rows]
    return pa.table({"name": pa.array(names, pa.string()), "value": pa.array(values, pa.string())})
