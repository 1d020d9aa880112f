"""`register Ray.`model` as f where registerCode='''…''' and predictCode='''…'''`: a model as a SQL function.

Byzer's "deploy model". The path names a catalog table holding the saved model (a file table:
start/offset/value rows, e.g. `load delta.`ai_model.mnist_model` as mnist_model`).

- The registerCode runs in the session's *model-function worker*: a cell worker started for
  `register Ray` only, through its own PythonRuntime, with the model table as its model input.
  Its `UDFBuilder.build(ray_context, init_func, predict_func)` starts the function's Ray actors,
  each restoring the model once (console/worker/udf.py).
- `f` becomes a DuckDB function over `array<array<double>>` (Byzer's signature). DuckDB hands
  it a batch of rows at a time; each batch goes to that worker as one UdfCall whose predictCode
  (`UDFBuilder.apply(ray_context)`) splits it over the actors and returns one value per row.

Why a worker of its own, not the cell worker: a cell ends its Ray job when it finishes, which
ends every actor it made; the model's actors must outlive the register statement. Detached
actors would outlive everything, the kernel's death included. Actors owned by a worker that
never runs cells end exactly when they should: with that worker, which ends with the kernel
(docs/python-runtime.md, "Models as SQL functions").
"""
from __future__ import annotations

import difflib
import re
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost
from console.kernel.job import PythonJob
from console.wire.cell import Output
from console.wire.worker import UdfCall

if TYPE_CHECKING:
    from console.kernel.python_runtime import PythonRuntime

VALUE_TYPE = pa.list_(pa.list_(pa.float64()))  # Byzer's array<array<double>>, in and out
SQL_TYPE = "DOUBLE[][]"
BATCH_ROWS = 1024  # rows per call to the worker: bounds how long an interrupt waits for a batch
# Byzer's default predictCode (Ray.scala): the actors do the work.
DEFAULT_PREDICT = """
from pyjava.api.mlsql import RayContext
from pyjava.udf import UDFBuilder

ray_context = RayContext.connect(globals(), context.conf["rayAddress"])
UDFBuilder.apply(ray_context)
"""
_CODE_OPTIONS = ("registerCode", "predictCode")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass
class _Deploy:
    """A session's model functions: the worker that serves them and the runtime that drives it."""

    runtime: "PythonRuntime"
    functions: dict[str, "ModelFunction"] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one call to the worker at a time


_deploys: "weakref.WeakKeyDictionary[Any, _Deploy]" = weakref.WeakKeyDictionary()


def _deploy(session: SessionHost) -> _Deploy:
    found = _deploys.get(session)
    if found is None:
        from console.kernel.python_runtime import PythonRuntime

        cells = session.python_runtime()  # share its Ray cluster handle: one user of the head per kernel
        found = _deploys[session] = _Deploy(PythonRuntime(session.cfg, session.emit, cluster=cells.cluster))
    return found


def shutdown(session: SessionHost) -> None:
    """Stop the session's model functions (their worker, and so their actors). Session.shutdown calls this."""
    deploy = _deploys.pop(session, None)
    if deploy is not None:
        deploy.functions.clear()
        deploy.runtime.shutdown(release=False)  # the cell runtime releases the shared head


def interrupt(session: SessionHost) -> None:
    """Interrupt the batch a model function is predicting (Session.interrupt calls this)."""
    deploy = _deploys.get(session)
    if deploy is not None:
        deploy.runtime.interrupt()


def register(session: SessionHost, stmt: lang.Register, run: CellRun) -> None:
    name = stmt.function
    if not _NAME.match(name):
        raise CellError("parse", f"register Ray: {name!r} is not a function name (letters, digits, _)",
                        *lang.template.position_in(stmt, name))
    table = _model_table(session, stmt)
    opts = stmt.options
    code = opts.get("registerCode", "").strip("\n")
    if not code.strip():
        raise CellError("parse", "register Ray needs registerCode='''…''': the Python code that restores the model "
                                 "and calls UDFBuilder.build(ray_context, UDFBuildInFunc.init_tf, predict_func)",
                        stmt.line, stmt.column)
    conf = dict(session.python_conf)
    conf.update({k: v for k, v in opts.items() if k not in _CODE_OPTIONS})
    conf.setdefault("rayAddress", "auto")  # the docs' code reads context.conf["rayAddress"]
    env = dict(session.python_env)
    deploy = _deploy(session)
    job = PythonJob(code=opts["registerCode"], conf=conf, env=env, model_table=table,
                    code_line=_code_line(stmt, opts["registerCode"]))
    with deploy.lock:
        deploy.functions.pop(name, None)
        out = _call(deploy, job, name, "register")
    predict = opts.get("predictCode") or DEFAULT_PREDICT
    fn = ModelFunction(session, deploy, name, predict, _code_line(stmt, predict), conf, env,
                       debug=str(opts.get("debugMode", "")).lower() == "true")
    session.sql.register_function(name, fn, [SQL_TYPE], SQL_TYPE, vectorized=True)
    deploy.functions[name] = fn
    run.show("register", out if out is not None and out.num_rows else pa.table({"function": [name]}))


def _model_table(session: SessionHost, stmt: lang.Register) -> pa.Table:
    if not stmt.path:
        raise CellError("parse", "register Ray.`…` needs the model's table between the backquotes, e.g. "
                                 "load delta.`ai_model.mnist_model` as mnist_model; register Ray.`mnist_model` as f",
                        stmt.line, stmt.column)
    table = session.lookup(stmt.path)
    if table is not None:
        return table
    names = sorted(session.tables)
    close = difflib.get_close_matches(stmt.path, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise CellError("data", f"register Ray: no table {stmt.path!r} holds the model{hint} Load the saved model "
                            f"first (load delta.`db.model` as {stmt.path}); tables in this session: "
                            f"{', '.join(names) or 'none yet'}", *lang.template.position_in(stmt, stmt.path))


def _code_line(stmt: lang.Register, code: str) -> int:
    """The cell line where `code` starts, so tracebacks name lines of the cell."""
    return lang.template.position_in(stmt, code)[0] if code and code in stmt.source else stmt.line


def _call(deploy: _Deploy, job: PythonJob, name: str, phase: str) -> pa.Table | None:
    table: pa.Table | None = deploy.runtime.run(
        job, send_as=lambda run_job: UdfCall(job=run_job, function=name, phase=phase))
    return table


class ModelFunction:
    """The DuckDB function `name`: batches of `array<array<double>>` in, one value per row out."""

    def __init__(self, session: SessionHost, deploy: _Deploy, name: str, code: str, code_line: int,
                 conf: dict[str, str], env: dict[str, str], debug: bool) -> None:
        self.session, self.deploy, self.name = session, deploy, name
        self.code, self.code_line, self.conf, self.env, self.debug = code, code_line, conf, env, debug

    def __call__(self, values: pa.Array | pa.ChunkedArray) -> pa.Array:
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        values = values.cast(VALUE_TYPE)
        valid = values.is_valid()
        present = values.filter(valid)
        parts = [self._predict(present.slice(start, BATCH_ROWS)) for start in range(0, len(present), BATCH_ROWS)]
        results = pa.concat_arrays(parts) if parts else pa.array([], VALUE_TYPE)
        if len(present) == len(values):
            return results
        # Null arguments give null results: row i takes result number (valid rows before i).
        positions = pa.array(valid.cast(pa.int64()).to_numpy().cumsum() - 1)
        return pc.if_else(valid, results.take(pc.max_element_wise(positions, 0)), None)

    def _predict(self, batch: pa.Array) -> pa.Array:
        started = time.monotonic()
        job = PythonJob(code=self.code, conf=dict(self.conf), env=self.env,
                        input_table=pa.table({"value": batch}), code_line=self.code_line)
        with self.deploy.lock:  # DuckDB may call from several threads; the worker takes one call at a time
            if self.deploy.functions.get(self.name) is not self:
                raise RuntimeError(f"{self.name} was replaced or stopped; run its register Ray statement again")
            try:
                out = _call(self.deploy, job, self.name, "predict")
            except CellError as exc:
                raise RuntimeError(f"{self.name}: {exc.message}") from None
        if out is None or "value" not in out.column_names or out.num_rows != len(batch):
            got = "no table" if out is None else f"{out.num_rows} rows, columns {out.column_names}"
            raise RuntimeError(f"{self.name}: predictCode must answer one `value` per row (call "
                               f"UDFBuilder.apply(ray_context)); for {len(batch)} rows it gave {got}")
        if self.debug:
            self.session.emit(Output(text=f"[{self.name}] {len(batch)} rows in "
                                               f"{time.monotonic() - started:.2f} s\n", stream="system"))
        return out.column("value").combine_chunks().cast(VALUE_TYPE)
