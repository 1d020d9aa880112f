"""The cell worker process: runs Python cells sent by the kernel, one at a time, as a Ray driver.

Started by the kernel as `bash -c "<PYTHON_ENV> && exec python -m console.worker.main FD"`,
where FD is one end of a socket pair carrying the messages of console/wire/worker.py
(console/kernel/worker_process.py is the other end).
Cells share one namespace, the session's globals (cell.CellRunner.globals), holding each cell's
`context`; if a cell connected to Ray, the worker disconnects afterwards, which ends the cell's
Ray job and with it every actor the cell made, unless a global holds an actor handle.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time

from console.actors.capture import KerasMetrics
from console.wire.worker import RunJob, UdfCall, WorkerComplete, WorkerExit, WorkerReady, WorkerVariables
from console.worker.channel import Channel, ChannelStream, tag_cell_threads

CELL_FILE = "<cell>"


def _exit_with_parent(interval: float = 1.0) -> None:
    """End this worker when the process that started it dies (a kernel killed by kill -9).

    A cell may run for hours without reading the channel, so EOF alone would notice too late;
    orphaned, the worker would keep training and holding its Ray actors. Polling getppid() is
    used rather than PR_SET_PDEATHSIG, which fires when the parent *thread* that forked us ends.
    """
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(70)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    _exit_with_parent()
    channel = Channel(int(argv[0]))
    metrics = KerasMetrics()
    arrived = threading.Event()
    out = ChannelStream(channel, "stdout", metrics, arrived)
    err = ChannelStream(channel, "stderr", metrics, arrived)
    sys.stdout, sys.stderr = out, err
    # SIGINT means "interrupt the cell": only while a cell runs (see cell.execute); idle, ignore it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from console.worker.cell import CellRunner  # after the streams are in place: imports may print

    tag_cell_threads(channel)  # a cell's threads print into their own cell's run, not the next one's
    runner = CellRunner(channel, out, err)
    from console.worker import display

    display.install(channel)  # display(fig) in cells, Utils.show_plt
    channel.send(WorkerReady(pid=os.getpid(), python_version=sys.version.split()[0]))
    while True:
        try:
            msg = channel.recv()
        except (EOFError, OSError):
            return 0
        if isinstance(msg, RunJob):
            runner.run(msg)
        elif isinstance(msg, UdfCall):  # the model-function worker (register Ray)
            from console.worker.udf_calls import handle

            handle(runner, msg)
        elif isinstance(msg, WorkerComplete):
            runner.complete(msg)
        elif isinstance(msg, WorkerVariables):
            runner.variables(msg)
        elif isinstance(msg, WorkerExit):
            runner.close()
            return 0


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]) or 0)
