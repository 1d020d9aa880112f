"""A kernel engine for the browser tests: the real engine.Session, plus `--script` cells that
print, draw progress bars, report metrics and sleep on command, so the page's live paths are
tested in seconds and without Ray. Anything else runs on the real engine.

    --script
    print 40 every 0.05              # 40 numbered driver lines, 50 ms apart
    actors 20 every 0.05 from A, B   # two threads printing as Ray actors would, interleaved
    progress 30 every 0.02           # a Keras-style \\r bar, then a newline
    metrics 5 every 0.05 from w0, w1 # loss/accuracy per worker per epoch
    big 5000000                      # that many bytes of output, as fast as possible
    sleep 30
    crash                            # SIGKILL the kernel
"""
from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

from console.kernel.session import CellOutcome, Session
from console.messages import ErrorEvent, MetricsEvent, OutputEvent


def _opt(args: list[str], name: str, default: Any, kind: type = float) -> Any:
    return kind(args[args.index(name) + 1]) if name in args else default


def _sources(args: list[str]) -> list[str]:
    return args[args.index("from") + 1:] if "from" in args else ["driver"]


class BrowserScriptSession(Session):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stop = threading.Event()

    def run_cell(self, source: str, kind: str = "mlsql", cell: Any = None) -> CellOutcome:
        if not source.startswith("--script"):
            return super().run_cell(source, kind, cell)
        self._stop.clear()
        for line in source.splitlines()[1:]:
            words = line.replace(",", " ").split()
            if words:
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
        every = _opt(args, "every", 0.0)
        for i in range(1, int(args[0]) + 1):
            if self._stop.wait(every) if every else self._stop.is_set():
                return
            self._out(f"line {i}\n")

    def _actors(self, args: list[str]) -> None:
        every = _opt(args, "every", 0.0)

        def actor(name: str) -> None:
            for i in range(1, int(args[0]) + 1):
                if self._stop.wait(every):
                    return
                self._out(f"{name} says {i}\n", f"Worker pid={name}")

        threads = [threading.Thread(target=actor, args=(s,)) for s in _sources(args)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _progress(self, args: list[str]) -> None:
        steps, every = int(args[0]), _opt(args, "every", 0.0)
        for i in range(1, steps + 1):
            bar = "=" * i + ">" + "." * (steps - i)
            self._out(f"\r{i}/{steps} [{bar}] - loss: {1 / i:.4f}")
            if self._stop.wait(every):
                return
        self._out("\n")

    def _metrics(self, args: list[str]) -> None:
        every = _opt(args, "every", 0.0)
        for epoch in range(1, int(args[0]) + 1):
            for n, source in enumerate(_sources(args)):
                loss = 2.0 / (epoch + n * 0.5)
                self.emit(MetricsEvent(values={"loss": loss, "accuracy": 1 - loss / 2.5}, source=source, step=epoch))
            if self._stop.wait(every):
                return

    def _big(self, args: list[str]) -> None:
        total, line = int(args[0]), "x" * 99 + "\n"
        for i in range(total // 100 // 1000):
            if self._stop.is_set():
                return
            self._out(line * 1000)

    def _sleep(self, args: list[str]) -> None:
        self._stop.wait(float(args[0]))

    def _crash(self, args: list[str]) -> None:
        os.kill(os.getpid(), signal.SIGKILL)
