"""The model-function worker's side of UdfCall: run registerCode or predictCode, keep Ray up.

A cell (RunJob) ends its Ray job when it finishes (cell.CellRunner.release); a UdfCall does not:
the actors UDFBuilder.build started must outlive the call that started them, and each batch of
a select must not pay for a new Ray connection. That is why `register Ray` gets a worker of its
own (console/kernel/raydeploy.py): cells never run in it.
"""
from __future__ import annotations

import linecache

from console.actors.data import clear_registry
from console.wire.head import ClusterInfo
from console.wire.worker import CellDone, RunJob, UdfCall
from console.worker.cell import CELL_FILE, CellRunner, WorkerHost, describe, execute, mark_fds, read_ipc, write_ipc
from console.worker.context import PythonContext, model_servers

_cluster: ClusterInfo | None = None  # the notebook's cluster, asked for once per worker


class _UdfHost(WorkerHost):
    """WorkerHost that asks the kernel for the cluster once, not once per batch."""

    def cluster_info(self) -> ClusterInfo:
        global _cluster
        if _cluster is None:
            _cluster = super().cluster_info()
        self.cluster = _cluster
        return _cluster


def handle(runner: CellRunner, msg: UdfCall) -> None:
    """Run the call's code in a fresh namespace holding `context`; answer CellDone."""
    job: RunJob = msg.job
    runner.channel.job_id = job.job_id
    result_path, error = None, None
    try:
        conf = dict(job.conf)
        conf["UDF_CLIENT"] = msg.function  # Byzer's name for "the function this code serves"
        if msg.phase == "predict":
            conf["directData"] = "true"
        context = PythonContext(job.job_id, [], conf, table=read_ipc(job.input_path),
                                model_table=read_ipc(job.model_path), host=_UdfHost(runner, job),
                                table_path=job.input_path)
        if context._model_table is not None:
            conf["modelServers"] = model_servers(context._model_table, conf.get("timezone", "UTC"))
        execute(job.code, job.code_line, context)
        output = context.output()
        if output is not None:
            write_ipc(output, job.output_path)
            result_path = job.output_path
    except BaseException as exc:  # the code's failure is data for the kernel
        error = describe(exc)
    finally:
        clear_registry()  # the model's rows are in the object store by now
        linecache.cache.pop(CELL_FILE, None)
        runner.out.flush_all()
        runner.err.flush_all()
    runner.channel.send(CellDone(job_id=job.job_id, result_path=result_path, error=error,
                                 marked=mark_fds(job.job_id)))
    runner.channel.job_id = ""
