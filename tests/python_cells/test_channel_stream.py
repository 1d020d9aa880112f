"""The cell worker's stdout/stderr: held plain text keeps its order, its actor and Keras lines, and its deadline."""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from console.actors.capture import KerasMetrics
from console.wire.channel import Channel as WireChannel
from console.wire.worker import FROM_WORKER, CellMetrics, CellOutput
from console.worker.channel import Channel, ChannelStream


_SETTLED = "settled-marker"  # the source of settle()'s marker, kept out of what arrived


class Pipe:
    """A real channel over a socket pair, and what arrived at the kernel's end."""

    def __init__(self) -> None:
        a, b = socket.socketpair()
        self.channel = Channel(a.detach())
        self.channel.job_id = "job"
        self._sock = b  # the kernel's end, read as the kernel does (worker_process.py)
        self._reader = WireChannel(FROM_WORKER, read=b.fileno())
        self.got: list[Any] = []
        self._settled = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()
        self.out = ChannelStream(self.channel, "stdout", KerasMetrics(), threading.Event())
        self.err = ChannelStream(self.channel, "stderr", self.out.metrics, threading.Event())

    def _drain(self) -> None:
        for msg in self._reader.messages():
            if isinstance(msg, CellOutput) and msg.source == _SETTLED:
                self._settled.set()
            else:
                self.got.append(msg)

    def settle(self) -> None:
        """Everything written so far has arrived: a marker sent after it came through."""
        self._settled.clear()
        self.out.flush_all()
        self.err.flush_all()
        self.channel.send(CellOutput(job_id="job", text="-", source=_SETTLED, stream="stdout"))
        assert self._settled.wait(60), "the marker never came through the channel"

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


def test_held_text_leaves_on_its_timer_without_another_write(pipe: Pipe) -> None:
    print("no flush", file=pipe.out)
    # Nothing else is written and the pipe stays open: the text can only leave by the batcher's
    # timer (two stages of BATCH_SECONDS). How soon is bench/stream_latency.py's to measure; the
    # deadline only ends a test that would hang.
    deadline = time.monotonic() + 60
    while not pipe.got and time.monotonic() < deadline:
        time.sleep(0.002)
    assert pipe.text() == "no flush\n"


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
    from console.wire.worker import CellDone

    print("printed first", file=pipe.out)
    pipe.channel.send(CellDone(job_id="job", result_path=None, error=None))  # as display() and a cell end send
    time.sleep(0.1)
    kinds = [type(m).__name__ for m in pipe.got]
    assert kinds == ["CellOutput", "CellDone"], kinds


def _screen(chunks: list[str]) -> str:
    """What a viewer shows: text appends; a chunk starting with "\\r" replaces the unfinished line."""
    shown = ""
    for chunk in chunks:
        if chunk.startswith("\r"):
            shown, chunk = shown[:shown.rfind("\n") + 1], chunk[1:]
        shown += chunk
    return shown


def test_a_line_without_end_goes_out_as_it_stands(pipe: Pipe) -> None:
    # 5 MB on one line, 100 characters a write: it went out only at the end, and every write
    # copied the whole line held so far (quadratic: a 100 MB line took minutes).
    piece = "y" * 99 + "."
    for _ in range(50_000):
        pipe.out.write(piece)
    time.sleep(0.1)
    assert len(pipe.text()) > 4_900_000  # sent as it came, before the line ended
    pipe.out.write(" end\n")
    pipe.settle()
    assert pipe.text() == piece * 50_000 + " end\n"  # plain appends: the log is the text as printed


def test_a_redraw_over_a_long_line_and_flushed_dots(pipe: Pipe) -> None:
    pipe.out.write("A" * 10_000)
    pipe.out.write("\rBB\n")  # a carriage return over a line already sent: the redraw replaces it
    for _ in range(3000):
        print(".", end="", flush=True, file=pipe.out)  # each flush sends the new dot, not the row again
    print(file=pipe.out)
    pipe.settle()
    chunks = [m.text for m in pipe.got if isinstance(m, CellOutput)]
    assert _screen(chunks) == "BB\n" + "." * 3000 + "\n"
    assert sum(len(c) for c in chunks) < 10_000 + 3 * 3000 + 5_000  # linear in what was printed
