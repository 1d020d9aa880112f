"""The tests' one scripted engine: the real console.kernel.session.Session, plus `--script` cells.

A script cell prints, draws progress bars, reports metrics and sleeps on command, from several
threads as Ray actors would, so the streaming path (kernel pipe, batcher, store, room, page) is
tested in seconds and without Ray. Any other cell runs on the real engine. Each verb means one
thing; `every S` waits S seconds after each line (interruptibly), `from` names the sources:

    --script
    print 40 every 0.05 from driver      # "line 1" … "line 40", from one source (default driver)
    actors 20 every 0.05 from A, B       # a thread per actor: "A says 1" … from "Worker pid=A"
    stamp 100 every 0.02 from A, B       # a thread per name: "A 7 <time.time()>" from "Worker pid=A"
    progress 30 every 0.02               # a Keras-style \\r bar with 30 redraws, then a newline
    metrics 5 every 0.05 from w0, w1     # loss/accuracy per source per epoch (loss 1/epoch on the first)
    big 5000000                          # that many bytes of 100-byte lines, as fast as possible
    sleep 30                             # until interrupted
    hold_next_start                      # the next cell, once announced running, waits for an interrupt
                                         # before it starts (the kernel's window between the two)
    crash                                # SIGKILL the kernel
    fail boom                            # raise RuntimeError("boom"): a fault of ours, not the user's
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from console.kernel.session import Session
from console.protocols import CellOutcome
from console.wire.cell import Failure, Metrics, Output

SCRIPT = "--script"


def _every(args: list[str]) -> float:
    return float(args[args.index("every") + 1]) if "every" in args else 0.0


def _sources(args: list[str]) -> list[str]:
    return args[args.index("from") + 1:] if "from" in args else ["driver"]


def actor_source(name: str) -> str:
    """How Ray names an actor's output source; the page's log filter shows it."""
    return f"Worker pid={name}"


class ScriptedEngine(Session):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stop = threading.Event()
        self._hold_next = False

    # The kernel sets `replay` after it announced a cell running and before run_cell: a held start
    # waits there, for the interrupt, as a loaded machine's kernel thread might have.
    @property  # type: ignore[override]
    def replay(self) -> Any:
        return self.__dict__.get("_replay")

    @replay.setter
    def replay(self, value: Any) -> None:
        self.__dict__["_replay"] = value
        if self.__dict__.get("_hold_next"):
            self._hold_next = False
            self._stop.wait(60)

    def run_cell(self, source: str, kind: str = "mlsql", cell: Any = None, run_id: str = "") -> CellOutcome:
        if not source.startswith(SCRIPT):
            return super().run_cell(source, kind, cell, run_id)
        if not self._prepared:  # as Session.run_cell: an interrupt sent once the cell ran is kept
            self.prepare_cell()
        self._prepared = False
        for line in source.splitlines()[1:]:
            words = line.replace(",", " ").split()
            if words and not self._stop.is_set():
                getattr(self, "_" + words[0])(words[1:])
            if self._stop.is_set():
                return CellOutcome(ok=False, error=Failure(kind="interrupted", message="the cell was interrupted"))
        return CellOutcome(ok=True)

    def prepare_cell(self) -> None:
        self._stop.clear()
        super().prepare_cell()

    def interrupt(self) -> None:
        self._stop.set()
        super().interrupt()

    def _out(self, text: str, source: str = "driver") -> None:
        self.emit(Output(text=text, source=source, stream="stdout"))

    def _paced(self, count: int, every: float, write: Callable[[int], None]) -> None:
        """write(1..count), waiting `every` after each; stops early when interrupted."""
        for i in range(1, count + 1):
            if self._stop.is_set():
                return
            write(i)
            if every and self._stop.wait(every):
                return

    def _threads(self, names: list[str], target: Callable[[str], None]) -> None:
        threads = [threading.Thread(target=target, args=(name,)) for name in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _print(self, args: list[str]) -> None:
        source = _sources(args)[0]
        self._paced(int(args[0]), _every(args), lambda i: self._out(f"line {i}\n", source))

    def _actors(self, args: list[str]) -> None:
        count, every = int(args[0]), _every(args)
        self._threads(_sources(args), lambda name: self._paced(
            count, every, lambda i: self._out(f"{name} says {i}\n", actor_source(name))))

    def _stamp(self, args: list[str]) -> None:
        count, every = int(args[0]), _every(args)
        self._threads(_sources(args), lambda name: self._paced(
            count, every, lambda i: self._out(f"{name} {i} {time.time():.6f}\n", actor_source(name))))

    def _progress(self, args: list[str]) -> None:
        steps = int(args[0])

        def redraw(i: int) -> None:
            bar = "=" * i + ">" + "." * (steps - i)
            self._out(f"\r{i}/{steps} [{bar}] - loss: {1 / i:.4f}")

        self._paced(steps, _every(args), redraw)
        if not self._stop.is_set():
            self._out("\n")

    def _metrics(self, args: list[str]) -> None:
        sources = _sources(args)

        def epoch(step: int) -> None:
            for n, source in enumerate(sources):
                loss = 1.0 / (step + n * 0.5)
                self.emit(Metrics(values={"loss": loss, "accuracy": 1 - loss / 2}, source=source, step=step))

        self._paced(int(args[0]), _every(args), epoch)

    def _big(self, args: list[str]) -> None:
        block = ("x" * 99 + "\n") * 1000  # 100 kB a chunk
        self._paced(int(args[0]) // len(block), 0.0, lambda i: self._out(block))

    def _sleep(self, args: list[str]) -> None:
        self._stop.wait(float(args[0]))

    def _hold_next_start(self, args: list[str]) -> None:
        self._hold_next = True

    def _crash(self, args: list[str]) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def _fail(self, args: list[str]) -> None:
        raise RuntimeError(" ".join(args) or "scripted failure")
