"""The Channel every process hop uses, over real pipes and socket pairs: caps, pieces, parts, answers."""
from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from console.wire.channel import LINE_CAP, PIECE_CHARS, Channel, ProtocolError, new_request_id
from console.wire.codec import DecodeError
from console.wire.kernel import (FROM_KERNEL, TO_KERNEL, KernelAnswer, KernelQuery, RunMetrics, RunOutput,
                                 RunResult)
from console.wire.worker import FROM_WORKER, CellDone, CellError


def _file_of(fd: int) -> tuple[int, int] | None:
    """The file a descriptor number names now (None: the number is free)."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _close_if_still(fd: int, file: tuple[int, int] | None) -> None:
    """Close fd only if it still names `file`: a number closed already may name another thread's file now."""
    if file is not None and _file_of(fd) == file:
        os.close(fd)


@contextmanager
def _owned_pipe() -> Iterator[tuple[int, int]]:
    """A pipe whose ends the test may close itself (_received does, so does a Channel's close()):
    at the end only the ends still open are closed, each number closed once."""
    r, w = os.pipe()
    pipe_file = _file_of(r)
    try:
        yield r, w
    finally:
        for fd in (r, w):
            _close_if_still(fd, pipe_file)


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    with _owned_pipe() as ends:
        yield ends


def test_the_pipe_fixture_never_closes_a_number_it_no_longer_owns() -> None:
    """A test closes its ends itself (_received, a Channel's close()); the numbers are then free,
    and another thread of the worker (a server's, still stopping a kernel's Ray head) reuses them.
    Closing them again closed that thread's file: its rmtree's os.close failed with EBADF."""
    other, other_w = os.pipe()  # a file of another thread
    os.close(other_w)
    try:
        with _owned_pipe() as (r, w):
            Channel(FROM_KERNEL, write=w).close()  # the channel's close() is the one close of w
            os.close(r)
            os.dup2(other, r)  # the freed numbers, taken by another thread's files
            os.dup2(other, w)
        for fd in (r, w):
            os.fstat(fd)  # still open: the end of the pipe left them alone
    finally:
        others = _file_of(other)
        for fd in (r, w, other):
            _close_if_still(fd, others)


def _received(r: int, w: int, *lines: bytes, vocabulary: Any = FROM_KERNEL) -> list[Any]:
    """What a reader on r gets while a thread writes `lines` on w; both ends are closed after."""
    def write() -> None:
        try:
            for line in lines:
                os.write(w, line)
        except OSError:  # the reader stopped reading and closed its end
            pass
        finally:
            os.close(w)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        return list(Channel(vocabulary, read=r).messages())
    finally:
        os.close(r)
        writer.join(10)


def test_a_line_past_the_cap_is_a_protocol_error_before_it_is_kept(pipe: tuple[int, int]) -> None:
    r, w = pipe
    with pytest.raises(ProtocolError, match=f"longer than {LINE_CAP} bytes"):
        _received(r, w, *[b"x" * 65536] * 40)  # 2.5 MiB, no newline


@pytest.mark.parametrize("line, why", [
    (b'{"type": "output", "text": "x", "notebook_id": "../../lake", "run_id": "r"}', "unknown message type 'output'"),
    (b'{"type": "run_output", "run_id": "r", "text": 5}', "must be a string"),
    (b'{"type": "run_output", "run_id": "r", "text": "x", "notebook_id": "n"}', "unknown fields"),
    (b'{"type": "run_metrics", "run_id": "r", "values": {"loss": NaN}}', "finite"),
    (b'{"type": "run_metrics", "run_id": "r", "values": {"loss": [1]}}', "must be a number"),
    (b'{"type": "run_output", "run_id": "r", "text": "x", "stream": "secret"}', "must be one of"),
    (b'{"type": "execute", "run_id": "r", "cell_id": "c", "source": "x"}', "unknown message type 'execute'"),
    (b'[1, 2]', "must be a JSON object"),
    (b'{"type": "kernel_answer", "request_id": "' + b"a" * 65 + b'"}', "longer than 64"),
    (b'{' * 100_000, "not a JSON line"),
])
def test_a_line_that_is_not_a_message_of_this_hop_names_what_was_wrong(pipe: tuple[int, int], line: bytes,
                                                                       why: str) -> None:
    r, w = pipe
    with pytest.raises(ProtocolError, match=why.replace("[", r"\[")):
        _received(r, w, line + b"\n")


def test_long_output_goes_in_pieces_and_a_long_answer_in_parts(pipe: tuple[int, int]) -> None:
    r, w = pipe
    text = "é" * (3 * PIECE_CHARS + 5)  # several pieces, each under the cap
    rows = [["row %d " % i + "x" * 200] for i in range(10_000)]  # a 2+ MB answer: parts
    out = Channel(FROM_KERNEL, write=w)
    got: list[Any] = []
    reader = threading.Thread(target=lambda: got.extend(Channel(FROM_KERNEL, read=r).messages()))
    reader.start()
    assert out.send(RunOutput("r", text))
    assert out.send(RunResult("r", "t", [{"name": "a", "type": "string"}], rows, 10_000))
    out.close()
    reader.join(30)
    outputs = [m for m in got if isinstance(m, RunOutput)]
    assert len(outputs) == 4 and "".join(m.text for m in outputs) == text
    (result,) = [m for m in got if isinstance(m, RunResult)]
    assert result.rows == rows


def test_a_request_gets_its_answer_and_answers_nobody_waits_for_are_dropped() -> None:
    server_end, kernel_end = socket.socketpair()
    server = Channel(FROM_KERNEL, read=server_end.fileno(), write=server_end.fileno(), answers=(KernelAnswer,))
    kernel = Channel(TO_KERNEL, read=kernel_end.fileno(), write=kernel_end.fileno())
    threading.Thread(target=lambda: list(server.messages()), daemon=True).start()

    def answer_queries() -> None:
        for msg in kernel.messages():
            if isinstance(msg, KernelQuery) and msg.what != "silence":
                kernel.send(KernelAnswer(new_request_id(), data={"stray": True}))  # nobody asked
                kernel.send(KernelAnswer(msg.request_id, data={"what": msg.what}))
                kernel.send(KernelAnswer(msg.request_id, data={"again": True}))  # answered already
    threading.Thread(target=answer_queries, daemon=True).start()
    answer = server.request(KernelQuery(new_request_id(), "inspect"), KernelAnswer, 10)
    assert answer.data == {"what": "inspect"}
    with pytest.raises(TimeoutError):
        server.request(KernelQuery(new_request_id(), "silence"), KernelAnswer, 0.3)
    assert server.dropped >= 2
    server_end.close()
    kernel_end.close()


def test_nested_records_decode_typed_and_a_wrong_one_is_refused(pipe: tuple[int, int]) -> None:
    r, w = pipe
    done = CellDone("job", None, CellError("python", "boom", 3, "tb"), ("stdout",))
    line = Channel(FROM_WORKER, write=w)
    assert line.send(done)
    line.close()
    (got,) = list(Channel(FROM_WORKER, read=r).messages())
    assert got == done and isinstance(got.error, CellError) and got.marked == ("stdout",)
    with pytest.raises(DecodeError, match="line"):
        FROM_WORKER.decode({"type": "cell_done", "job_id": "j", "result_path": None,
                            "error": {"kind": "python", "message": "m", "line": "3"}})


def test_metric_values_are_finite_numbers() -> None:
    decoded = FROM_KERNEL.decode({"type": "run_metrics", "run_id": "r", "values": {"loss": 1}})
    assert decoded == RunMetrics("r", {"loss": 1.0})
    for bad in ("1", None, True, float("inf"), {"x": 1}):
        with pytest.raises(DecodeError):
            FROM_KERNEL.decode({"type": "run_metrics", "run_id": "r", "values": {"loss": bad}})


def test_a_request_ends_at_once_when_the_other_end_closes() -> None:
    ours, theirs = socket.socketpair()
    channel = Channel(FROM_KERNEL, read=ours.fileno(), write=ours.fileno(), answers=(KernelAnswer,))
    threading.Thread(target=lambda: list(channel.messages()), daemon=True).start()
    threading.Timer(0.2, theirs.close).start()
    with pytest.raises(ConnectionError, match="ended"):
        channel.request(KernelQuery(new_request_id(), "inspect"), KernelAnswer, 30)
    ours.close()


def test_a_senders_own_big_or_odd_values_are_fitted_not_a_protocol_break() -> None:
    from console.wire.codec import MAX_TEXT, fit

    rows = fit([["x" * (2 << 20), float("nan"), list(range(20_000))]])
    decoded = FROM_KERNEL.decode(RunResult("r", "t", [{"name": "s", "type": "string"}], rows, 1).to_wire())
    assert isinstance(decoded, RunResult)
    text, nan, items = decoded.rows[0]
    assert len(text) == MAX_TEXT and text.endswith("…") and nan is None and len(items) == 10_000
