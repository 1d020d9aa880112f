"""A kernel engine for the session tests: the real engine.Session, plus cells that start `--script`.

A script cell prints and sleeps on command, from several threads as Ray actors would, so the
streaming path (kernel pipe, batcher, store, room) is tested without waiting for Ray:

    --script
    print 100 every 0.01 from driver        # 100 numbered lines, 10 ms apart
    burst 5000 from A, B                    # two threads, 5000 lines each, as fast as possible
    progress 50                             # a \\r progress bar with 50 redraws, then a newline
    metrics 3 from worker-0                 # epochs 1..3 with loss and accuracy
    stamp 100 every 0.02 from A, B          # per source a thread printing "A 7 <time.time()>"
    sleep 2
    crash                                   # os.kill(getpid(), SIGKILL)
"""
from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from console.kernel.session import CellOutcome, Session
from console.messages import ErrorEvent, MetricsEvent, OutputEvent


class ScriptedSession(Session):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stop = threading.Event()

    def run_cell(self, source: str, kind: str = "mlsql", cell: Any = None) -> CellOutcome:
        if not source.startswith("--script"):
            return super().run_cell(source, kind, cell)
        self._stop.clear()
        for line in source.splitlines()[1:]:
            words = line.replace(",", " ").split()
            if not words:
                continue
            if self._stop.is_set():
                return CellOutcome(ok=False, error=ErrorEvent(kind="interrupted", message="the cell was interrupted"))
            getattr(self, "_" + words[0])(words[1:])
            if self._stop.is_set():
                return CellOutcome(ok=False, error=ErrorEvent(kind="interrupted", message="the cell was interrupted"))
        return CellOutcome(ok=True)

    def interrupt(self) -> None:
        self._stop.set()
        super().interrupt()

    def _out(self, text: str, source: str = "driver") -> None:
        self.emit(OutputEvent(text=text, source=source, stream="stdout"))

    def _print(self, args: list[str]) -> None:
        count = int(args[0])
        every = float(args[args.index("every") + 1]) if "every" in args else 0.0
        source = args[args.index("from") + 1] if "from" in args else "driver"
        for i in range(1, count + 1):
            if self._stop.is_set():
                return
            self._out(f"{source} line {i}\n", source)
            if every:
                time.sleep(every)

    def _burst(self, args: list[str]) -> None:
        count = int(args[0])
        sources = args[args.index("from") + 1:]

        def actor(source: str) -> None:
            for i in range(1, count + 1):
                self._out(f"{source} line {i}\n", source)

        threads = [threading.Thread(target=actor, args=(s,)) for s in sources]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _burst_stamped(self, args: list[str]) -> None:
        self._stamp([args[0], "every", "0", *args[1:]])

    def _stamp(self, args: list[str]) -> None:
        count, every = int(args[0]), float(args[args.index("every") + 1])
        sources = args[args.index("from") + 1:]

        def actor(source: str) -> None:
            for i in range(1, count + 1):
                self._out(f"{source} {i} {time.time():.6f}\n", source)
                if every:
                    time.sleep(every)

        threads = [threading.Thread(target=actor, args=(s,)) for s in sources]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _progress(self, args: list[str]) -> None:
        steps = int(args[0])
        for i in range(1, steps + 1):
            self._out(f"\rprogress {i}/{steps}")
        self._out("\n")

    def _metrics(self, args: list[str]) -> None:
        source = args[args.index("from") + 1] if "from" in args else "driver"
        for epoch in range(1, int(args[0]) + 1):
            self.emit(MetricsEvent(values={"loss": 1.0 / epoch, "accuracy": 1 - 0.5 / epoch}, source=source,
                                   step=epoch))

    def _sleep(self, args: list[str]) -> None:
        self._stop.wait(float(args[0]))

    def _crash(self, args: list[str]) -> None:
        os.kill(os.getpid(), signal.SIGKILL)
