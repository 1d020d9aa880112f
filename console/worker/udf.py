"""pyjava.udf: a saved model as a SQL function (`register Ray.`model` as f where registerCode=… and predictCode=…`).

This runs in the kernel's model-function worker, a cell worker kept for `register Ray` only
(console/kernel/raydeploy.py starts it). Its Ray connection stays up between calls, so the
actors UDFBuilder.build starts live as long as that worker; they are its own (not detached)
and end with it: at kernel shutdown or death, or when the function is registered again.

- registerCode calls `UDFBuilder.build(ray_context, init_func, predict_func)`: the model's file
  table goes into Ray's object store (one object per row, as Byzer puts it), and
  min(maxConcurrency, CPUs of the cluster) UDFWorker actors each restore the model once.
- predictCode calls `UDFBuilder.apply(ray_context)` once per batch of SQL rows: the batch is
  split into one contiguous part per actor; the results come back in row order.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from typing import Any, Callable

import pyarrow as pa

from console.actors.udf import UDFWorker
from console.worker.context import RayContext, ray_connected
from console.worker.streaming_tar import save_rows_as_file

OUTPUT_TYPE = pa.list_(pa.list_(pa.float64()))  # Byzer's outputSchema: st(field(value,array(array(double))))
DEFAULT_CONCURRENCY = 3  # Byzer's default maxConcurrency

_MASTERS: dict[str, "UDFMaster"] = {}


class UDFMaster:
    """A model function's actors, held by the worker that serves the function.

    Byzer keeps this in a detached actor; here the serving worker holds it, so the actors are
    owned by a process that lives exactly as long as the function may be called.
    """

    def __init__(self, name: str, conf: dict[str, str], model_refs: list[Any],
                 init_func: Callable[..., Any], apply_func: Callable[..., Any], count: int) -> None:
        import ray

        options: dict[str, Any] = {
            # No CPU held by default: a function registered for the whole session must not keep
            # later cells' actors from being scheduled. num_cpus/num_gpus in conf reserve them.
            "num_cpus": float(conf.get("num_cpus") or 0),
            "num_gpus": float(conf.get("num_gpus") or 0),
        }
        resources = {k[len("resource."):]: float(v) for k, v in conf.items() if k.startswith("resource.")}
        if resources:
            options["resources"] = resources
        actor: Any = ray.remote(UDFWorker).options(**options)
        self.name = name
        self.workers: list[Any] = [actor.remote(model_refs, conf, init_func, apply_func) for _ in range(count)]

    def wait_ready(self) -> list[int]:
        """Wait until every actor has restored the model; their pids. An init error raises here."""
        import ray

        return list(ray.get([w.ready.remote() for w in self.workers]))

    def apply(self, values: list[Any]) -> list[Any]:
        import ray

        if not values:
            return []
        parts = min(len(self.workers), len(values))
        bounds = [len(values) * i // parts for i in range(parts + 1)]
        refs = [w.apply_batch.remote(values[bounds[i]:bounds[i + 1]]) for i, w in enumerate(self.workers[:parts])]
        out: list[Any] = []
        for part in ray.get(refs):
            out.extend(part)
        return out

    def shutdown(self) -> None:
        import ray

        for w in self.workers:
            try:
                ray.kill(w)
            except Exception:  # already gone: nothing to end
                pass
        self.workers = []


def _model_rows(ray_context: RayContext) -> list[dict[str, Any]]:
    conf = ray_context.conf()
    servers = RayContext.parse_servers(conf.get("modelServers", ""))
    tables = [s.arrow() for s in servers]
    if not tables:
        raise Exception("UDFBuilder.build: no model table; name it in the statement: register Ray.`model_table` as f")
    table = pa.concat_tables(tables)
    if "start" in table.column_names:
        table = table.sort_by("start")  # a file table restores only in stream order
    return table.to_pylist()


def _actor_count(conf: dict[str, str]) -> int:
    import ray

    try:
        wanted = int(conf.get("maxConcurrency") or DEFAULT_CONCURRENCY)
    except ValueError:
        raise Exception(f"maxConcurrency must be a whole number; it is {conf.get('maxConcurrency')!r}") from None
    if wanted < 1:
        raise Exception(f"maxConcurrency must be at least 1; it is {wanted}")
    # More CPU inference actors than cores only share the cores (each has its own model copy).
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    return min(wanted, cpus)


class UDFBuilder:
    """What registerCode and predictCode call (pyjava's UDFBuilder)."""

    @staticmethod
    def build(ray_context: RayContext, init_func: Callable[[list[Any], dict[str, str]], Any],
              apply_func: Callable[[Any, Any], Any]) -> None:
        """Start the function's actors, each restoring the model with init_func(model_refs, conf)."""
        import ray

        conf = ray_context.conf()
        name = conf.get("UDF_CLIENT")
        if not name:
            raise Exception("UDFBuilder.build belongs in the registerCode of a `register Ray.`model` as f` statement")
        if not ray_connected():
            ray_context.python_context._host.connect_ray("auto")
        started = time.monotonic()
        model_refs = [ray.put(row) for row in _model_rows(ray_context)]
        old = _MASTERS.pop(name, None)
        if old is not None:
            old.shutdown()
        master = UDFMaster(name, conf, model_refs, init_func, apply_func, _actor_count(conf))
        try:
            pids = master.wait_ready()
        except BaseException:
            master.shutdown()
            raise
        _MASTERS[name] = master
        ray_context.python_context._output = pa.table({
            "function": [name], "actors": [len(pids)], "model_rows": [len(model_refs)],
            "seconds": [round(time.monotonic() - started, 2)]})

    @staticmethod
    def apply(ray_context: RayContext) -> None:
        """Predict the batch of SQL rows this call holds (column `value`); the output is column `value`."""
        conf = ray_context.conf()
        name = conf.get("UDF_CLIENT", "")
        master = _MASTERS.get(name)
        if master is None:
            known = ", ".join(sorted(_MASTERS)) or "none"
            raise Exception(f"no model function {name!r} is running (running: {known}); "
                            f"run its `register Ray.… as {name or 'f'}` statement again")
        table = ray_context.python_context._take_input()
        values = table.column("value").to_pylist() if "value" in table.column_names else []
        results = master.apply(values)
        try:
            column = pa.array(results, type=OUTPUT_TYPE)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise TypeError(f'predict_func must return {{"value": [[number, ...]]}} (array<array<double>>): '
                            f"{exc}") from None
        ray_context.python_context._output = pa.table({"value": column})


class UDFBuildInFunc:
    """Ready-made init functions for UDFBuilder.build (they run inside each actor)."""

    @staticmethod
    def init_tf(model_refs: list[Any], conf: dict[str, str]) -> Any:
        """A Keras model saved as a file table (start/offset/value rows): restored and loaded."""
        import ray
        import tensorflow as tf

        rows = sorted((ray.get(ref) for ref in model_refs), key=lambda r: r["start"])
        target = tempfile.mkdtemp(prefix="udf-model-")
        try:
            save_rows_as_file(rows, target)
            model = tf.keras.models.load_model(target)
        finally:
            shutil.rmtree(target, ignore_errors=True)
        # One model.predict per SQL row would print one progress bar per row into the cell.
        quiet = getattr(tf.keras.utils, "disable_interactive_logging", None)
        if quiet is not None:
            quiet()
        return model


def running() -> dict[str, int]:
    """Function name -> number of actors, of the functions this worker serves."""
    return {name: len(m.workers) for name, m in _MASTERS.items()}


__all__ = ["UDFBuildInFunc", "UDFBuilder", "UDFMaster", "UDFWorker"]
