"""A thread a cell starts prints into that cell's run, never into the next run (issue 29, item 4 of 'seams').

In a shared session alice's cell started a background thread that prints; bob's next run stored
her lines as his ("run by bob"). Now the worker tags the thread with the job of the cell that
started it, and the later run shows one notice instead of her lines.
"""
from __future__ import annotations

from typing import Any

from console.kernel.job import PythonJob

ALICE = """
import threading, time
def chatter():
    time.sleep(0.5)
    for i in range(5):
        print(f"alice's thread {i}", flush=True)
        time.sleep(0.3)
threading.Thread(target=chatter, daemon=True).start()
print("alice's cell ends")
"""
BOB = """
import time
time.sleep(2.5)
print("bob's cell")
"""
OWN = """
import threading
def inside():
    print("printed while its cell runs")
t = threading.Thread(target=inside)
t.start()
t.join()
"""


def test_a_threads_lines_stay_out_of_the_next_run(runtime: Any, events: Any) -> None:
    runtime.run(PythonJob(code=ALICE))
    assert "alice's cell ends" in events.text()
    events.clear()
    runtime.run(PythonJob(code=BOB))
    shown = events.text()
    assert "bob's cell" in shown and "alice's thread" not in shown, shown
    assert shown.count("a thread started by an earlier run is still printing") == 1, shown


def test_a_thread_that_prints_while_its_own_cell_runs_is_shown(runtime: Any, events: Any) -> None:
    runtime.run(PythonJob(code=OWN))
    assert "printed while its cell runs" in events.text()
