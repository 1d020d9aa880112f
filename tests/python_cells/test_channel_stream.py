"""The cell worker's stdout/stderr: held plain text keeps its order, its actor and Keras lines, and its deadline."""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

import pytest

from console.actors.capture import KerasMetrics
from console.messages import CellMetrics, CellOutput
from console.worker.channel import BATCH_SECONDS, Channel, ChannelStream


class Pipe:
    """A real channel over a socket pair, and what arrived at the kernel's end."""

    def __init__(self) -> None:
        a, b = socket.socketpair()
        self.channel = Channel(a.detach())
        self.channel.job_id = "job"
        self._reader = Connection(b.detach())
        self.got: list[Any] = []
        self.arrived: list[float] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.out = ChannelStream(self.channel, "stdout", KerasMetrics(), threading.Event())
        self.err = ChannelStream(self.channel, "stderr", self.out.metrics, threading.Event())

    def _drain(self) -> None:
        try:
            while True:
                self.got.append(self._reader.recv())
                self.arrived.append(time.monotonic())
        except (EOFError, OSError):
            pass

    def settle(self) -> None:
        self.out.flush_all()
        self.err.flush_all()
        time.sleep(0.1)

    def text(self, stream: str | None = None, source: str | None = None) -> str:
        return "".join(m.text for m in self.got if isinstance(m, CellOutput)
                       and (stream is None or m.stream == stream) and (source is None or m.source == source))

    def sequence(self) -> list[tuple[str, str]]:
        """(stream, text) of each message, neighbours of one stream merged."""
        out: list[tuple[str, str]] = []
        for m in self.got:
            if isinstance(m, CellOutput):
                if out and out[-1][0] == m.stream:
                    out[-1] = (m.stream, out[-1][1] + m.text)
                else:
                    out.append((m.stream, m.text))
        return out


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    yield Pipe()


def test_many_prints_arrive_whole_in_few_messages(pipe: Pipe) -> None:
    for i in range(20_000):
        print(f"line {i}", file=pipe.out)
    pipe.settle()
    assert pipe.text() == "".join(f"line {i}\n" for i in range(20_000))
    assert len(pipe.got) < 100  # batches, not a message a line


def test_stdout_and_stderr_keep_their_order(pipe: Pipe) -> None:
    print("a", file=pipe.out)
    print("b", file=pipe.err)
    print("c", end="", file=pipe.out)
    print("d", file=pipe.err)  # a partial stdout line stays partial; stderr goes after what came before
    print("", file=pipe.out)
    pipe.settle()
    assert pipe.sequence() == [("stdout", "a\n"), ("stderr", "b\nd\n"), ("stdout", "c\n")]


def test_held_text_leaves_within_the_batch_time(pipe: Pipe) -> None:
    sent = time.monotonic()
    print("no flush", file=pipe.out)
    deadline = time.monotonic() + 5
    while not pipe.got and time.monotonic() < deadline:
        time.sleep(0.002)
    assert pipe.text() == "no flush\n"
    assert pipe.arrived[0] - sent < BATCH_SECONDS * 2 + 0.2  # two batching stages, then the socket


def test_actor_lines_keras_lines_and_redraws_in_a_block(pipe: Pipe) -> None:
    pipe.out.write("plain\n(Trainer pid=42) from an actor\n")
    pipe.out.write("Epoch 1/2\n16/16 [==============================] - 0s 1ms/step - loss: 2.38 - accuracy: 0.11\n")
    pipe.out.write("half a ")
    pipe.out.write("line\n")
    pipe.out.write("progress 10%\rprogress 100%\n")  # a redraw takes the careful path
    pipe.settle()
    assert pipe.text(source="Trainer pid=42") == "from an actor\n"
    assert "plain\n" in pipe.text(source="driver") and "half a line\n" in pipe.text(source="driver")
    assert pipe.text(source="driver").endswith("\rprogress 100%\n")
    metrics = [m for m in pipe.got if isinstance(m, CellMetrics)]
    assert len(metrics) == 1 and metrics[0].values == {"loss": 2.38, "accuracy": 0.11} and metrics[0].step == 1


def test_another_threads_line_is_not_cut_into_the_cells(pipe: Pipe) -> None:
    pipe.out.write("cell starts ")
    other = threading.Thread(target=lambda: pipe.out.write("(Worker pid=7) whole line\n"))
    other.start()
    other.join()
    pipe.out.write("and ends\n")
    pipe.settle()
    assert pipe.text(source="driver") == "cell starts and ends\n"
    assert pipe.text(source="Worker pid=7") == "whole line\n"


def test_a_message_after_prints_comes_after_them(pipe: Pipe) -> None:
    from console.messages import CellDone

    print("printed first", file=pipe.out)
    pipe.channel.send(CellDone(job_id="job", result_path=None, error=None))  # as display() and a cell end send
    time.sleep(0.1)
    kinds = [type(m).__name__ for m in pipe.got]
    assert kinds == ["CellOutput", "CellDone"], kinds
