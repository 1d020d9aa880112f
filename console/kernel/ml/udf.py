"""`register ScriptUDF.`` as f where lang="python" and code='''def apply(self, x): …'''`: Python functions in SQL.

Byzer's Python form: `code` defines `apply(self, …)` (or a class named by className whose
methodName, default apply, is called), `dataType` is the Spark type of the result (default
string). The function becomes a DuckDB Arrow function: one call per batch, the user's function
once per row. It runs in the kernel process, inside the notebook's sandbox, and imports the
notebook's own packages (`%pip`) from its layer (import_from_layer).

Parameters are text unless the code annotates them (`def apply(self, a: float, b: float)`) or
`paramTypes="double,double"` says otherwise: DuckDB needs the types when the function is made,
and Byzer recommends Python UDFs for text handling.
"""
from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import typing
from typing import Any, Callable

import pyarrow as pa

from console import lang
from console.kernel.errors import CellError
from console.kernel.host import CellRun, SessionHost
from console.wire.cell import Output

_SIMPLE = {"string": "VARCHAR", "str": "VARCHAR", "float": "FLOAT", "double": "DOUBLE", "integer": "INTEGER",
           "int": "INTEGER", "long": "BIGINT", "bigint": "BIGINT", "short": "SMALLINT", "boolean": "BOOLEAN",
           "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP", "binary": "BLOB", "byte": "TINYINT"}
_PYTHON = {float: "DOUBLE", int: "BIGINT", str: "VARCHAR", bool: "BOOLEAN", bytes: "BLOB"}
_on_path: str | None = None  # the notebook layer this kernel process put on sys.path for its ScriptUDFs


def sql_type(spark: str) -> str:
    """A Spark type (`map(string,string)`, `array<double>`, `long`) as a DuckDB type; ValueError if unknown."""
    t = spark.strip().lower().replace("<", "(").replace(">", ")")
    if t in _SIMPLE:
        return _SIMPLE[t]
    m = re.fullmatch(r"array\s*\((.*)\)", t)
    if m:
        return sql_type(m.group(1)) + "[]"
    m = re.fullmatch(r"map\s*\((.*)\)", t)
    if m:
        depth, inner = 0, m.group(1)
        for i, ch in enumerate(inner):  # the comma between key and value, not one inside them
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                return f"MAP({sql_type(inner[:i])}, {sql_type(inner[i + 1:])})"
    raise ValueError(f"unknown type {spark.strip()!r}; use string, double, long, integer, boolean, date, "
                     f"binary, array(…) or map(…,…)")


def _annotation_type(hint: Any) -> str | None:
    if hint in _PYTHON:
        return _PYTHON[hint]
    if typing.get_origin(hint) is list and typing.get_args(hint) and typing.get_args(hint)[0] in _PYTHON:
        return _PYTHON[typing.get_args(hint)[0]] + "[]"
    return None


def compile_udf(code: str, class_name: str, method: str) -> tuple[Callable[..., Any], list[str | None]]:
    """The callable the code defines and, per parameter, its annotated type (None where not annotated)."""
    namespace: dict[str, Any] = {"__name__": "script_udf"}
    exec(compile(code, "<ScriptUDF>", "exec"), namespace)  # the notebook's own code, in its own sandbox
    if class_name:
        cls = namespace.get(class_name)
        if not isinstance(cls, type):
            raise ValueError(f"the code defines no class {class_name!r}")
        target = getattr(cls(), method, None)
        if target is None:
            raise ValueError(f"class {class_name} has no method {method!r}")
    else:
        target = namespace.get(method)
        if not callable(target):
            defined = [k for k, v in namespace.items() if callable(v) and not k.startswith("__")]
            raise ValueError(f"the code defines no function {method!r} (it defines: {', '.join(defined) or 'none'})")
    params = list(inspect.signature(target).parameters.values())
    drop_self = not class_name and bool(params) and params[0].name == "self"  # Byzer's `def apply(self, …)`
    if drop_self:
        params = params[1:]
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # an annotation that does not evaluate: treat as none
        hints = {}
    fn = target
    if drop_self:
        def fn(*args: Any) -> Any:
            return target(None, *args)
    return fn, [_annotation_type(hints.get(p.name)) for p in params]


def import_from_layer(session: SessionHost) -> None:
    """Let a ScriptUDF import the notebook's `%pip` packages. It runs in the kernel process, whose
    path, unlike the cell worker's PYTHONPATH, has no layer: put the notebook's current layer at the
    end of sys.path (after the base, so none of the kernel's own imports changes; a layer holds no
    base package anyway), and take a previous layer off it with the modules imported from there,
    so a UDF registered after `%pip` changed the environment imports the new versions."""
    global _on_path
    from console.kernel.envs import site_path

    path = site_path(session.notebook_env().layer())  # raises EnvError (the cell's error) when it cannot build
    if path == _on_path:
        return
    if _on_path is not None:
        if _on_path in sys.path:
            sys.path.remove(_on_path)
        gone = _on_path + os.sep
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(gone):
                del sys.modules[name]
    if path is not None:
        sys.path.append(path)
    importlib.invalidate_caches()
    _on_path = path


def register_script_udf(session: SessionHost, stmt: lang.Register, run: CellRun) -> None:
    opts = stmt.options
    where = lang.template.position_in(stmt, "lang")
    language = opts.get("lang", "python").strip().lower()
    if language in ("scala", "java"):
        raise CellError("data", f"ScriptUDF {stmt.function}: lang=\"{language}\" needs a JVM, which this "
                                "console does not run; write it in Python: lang=\"python\" and "
                                "code='''def apply(self, x): …'''",
                        *where)
    if language != "python":
        raise CellError("data", f"ScriptUDF {stmt.function}: unknown lang {language!r}; use python", *where)
    if opts.get("udfType", "udf").strip().lower() != "udf":
        raise CellError("data", f"ScriptUDF {stmt.function}: udfType={opts['udfType']!r}: only udf is supported "
                                "(Byzer's udaf is written in Scala)", *lang.template.position_in(stmt, "udfType"))
    code = opts.get("code", "")
    if not code.strip():
        raise CellError("data", f"ScriptUDF {stmt.function} needs code='''def apply(self, x): …'''", stmt.line,
                        stmt.column)
    import_from_layer(session)
    try:
        fn, annotated = compile_udf(code, opts.get("className", ""), opts.get("methodName", "apply"))
        declared = [sql_type(t) for t in opts["paramTypes"].split(",")] if opts.get("paramTypes") else []
        if declared and len(declared) != len(annotated):
            raise ValueError(f"paramTypes names {len(declared)} types for {len(annotated)} parameters")
        returns = sql_type(opts.get("dataType", "string"))
        # Unannotated parameters take the result's type (Byzer's echo and plus examples), text without dataType.
        params = declared or [a or returns for a in annotated]
    except SyntaxError as exc:
        line = lang.template.position_in(stmt, code)[0] + (exc.lineno or 1) - 1
        raise CellError("python", f"ScriptUDF {stmt.function}: {exc.msg}", line, exc.offset) from None
    except Exception as exc:  # the user's code ran and failed, or a type was unknown
        raise CellError("data", f"ScriptUDF {stmt.function}: {type(exc).__name__}: {exc}", stmt.line,
                        stmt.column) from None
    name = stmt.function

    def apply(*arrays: Any) -> pa.Array:
        columns = [_py(a) for a in arrays]
        out: list[Any] = []
        for i, args in enumerate(zip(*columns, strict=True)):
            if any(a is None for a in args):  # NULL in, NULL out, as for SQL's own functions
                out.append(None)
                continue
            try:
                out.append(fn(*args))
            except Exception as exc:
                raise ValueError(f"ScriptUDF {name} failed on row {i + 1} of a batch: "
                                 f"{type(exc).__name__}: {exc}") from None
        return pa.array(out, arrow_type)

    arrow_type = _arrow(session, returns)
    # DuckDB counts the callable's parameters: give the wrapper the function's arity.
    apply.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(len(params))])
    session.sql.register_function(name, apply, params, returns)
    session.emit(Output(text=f"register ScriptUDF: {name}({', '.join(params)}) -> {returns}\n",
                             source="engine", stream="system"))


def _py(array: Any) -> list[Any]:
    values = array.to_pylist()
    if pa.types.is_map(array.type):  # Arrow gives maps as (key, value) pairs; Byzer's code sees dicts
        return [None if v is None else dict(v) for v in values]
    return values


def _arrow(session: SessionHost, duck_type: str) -> pa.DataType:
    """The Arrow type DuckDB hands back for a DuckDB type name (asked of DuckDB itself)."""
    return session.sql.con.sql(f"select null::{duck_type} as v").to_arrow_table().schema.field("v").type
