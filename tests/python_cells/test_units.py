"""Pure units (no Ray, no worker): schemas, streaming_tar, capture, partitions, datasets."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from console.actors import capture, data
from console.worker import streaming_tar
from console.worker.schema import SchemaError, parse_schema, rows_to_table


def test_schema_forms() -> None:
    s = parse_schema("st(field(image,array(long)),field(label,long),field(m,map(string,double)),"
                     "field(s,st(field(x,int))))")
    assert s.names == ["image", "label", "m", "s"]
    assert s.field("image").type == pa.list_(pa.int64())
    assert s.field("s").type == pa.struct([pa.field("x", pa.int32())])
    assert parse_schema("file").names == ["start", "offset", "value"]
    assert parse_schema("file").field("value").type == pa.binary()
    ddl = parse_schema("a long, b array<string>, c struct<x:int,y:string>, d decimal(10,2)")
    assert ddl.types == [pa.int64(), pa.list_(pa.string()), pa.struct([("x", pa.int32()), ("y", pa.string())]),
                         pa.float64()]
    js = parse_schema('{"type":"struct","fields":[{"name":"a","type":"long"},'
                      '{"name":"b","type":{"type":"array","elementType":"double"}}]}')
    assert js.types == [pa.int64(), pa.list_(pa.float64())]
    assert parse_schema(None) is None and parse_schema(" ") is None
    with pytest.raises(SchemaError, match="unknown type"):
        parse_schema("st(field(a,lng))")


def test_rows_by_position_and_mismatch() -> None:
    schema = parse_schema("st(field(a,long),field(b,string))")
    t = rows_to_table([{"x": 1, "y": "u"}, {"x": 2, "y": "v"}], schema)  # names come from the schema
    assert t.column_names == ["a", "b"] and t.column("a").to_pylist() == [1, 2]
    with pytest.raises(SchemaError, match=r"row 1, value 'x' = 'oops' \(str\) does not fit schema column 1 `a int64`"):
        rows_to_table([{"x": 1, "y": "u"}, {"x": "oops", "y": "v"}], schema)
    with pytest.raises(SchemaError, match="row 0 has 1 values"):
        rows_to_table([{"x": 1}], schema)
    inferred = rows_to_table([{"n": 1, "v": np.array([1.0, 2.0])}], None)
    assert inferred.column("v").to_pylist() == [[1.0, 2.0]]
    assert rows_to_table([], None).column_names == ["value"]
    import pandas as pd
    assert rows_to_table(pd.DataFrame({"p": [1], "q": ["z"]}), schema).column_names == ["a", "b"]


def test_streaming_tar_round_trip(tmp_path) -> None:
    src = tmp_path / "model"
    (src / "variables").mkdir(parents=True)
    (src / "saved_model.pb").write_bytes(os.urandom(200_000))
    (src / "variables" / "v.data").write_bytes(b"abc")
    rows = list(streaming_tar.build_rows_from_file(str(src)))
    assert all(r["offset"] == len(r["value"]) <= streaming_tar.BLOCK_SIZE for r in rows)
    assert [r["start"] for r in rows] == list(np.cumsum([0] + [r["offset"] for r in rows[:-1]]))
    out = tmp_path / "restored"
    streaming_tar.save_rows_as_file(list(reversed(rows)), str(out))  # a list is sorted by start first
    assert (out / "saved_model.pb").read_bytes() == (src / "saved_model.pb").read_bytes()
    assert (out / "variables" / "v.data").read_bytes() == b"abc"
    table = rows_to_table(rows, parse_schema("file"))
    assert table.num_rows == len(rows)


def test_line_redraw_and_keras_metrics() -> None:
    chunks: list[str] = []
    lines = capture.LineRedraw(chunks.append)
    lines.write(" 1/16 [>....] - ETA: 3s - loss: 2.57")
    lines.flush()
    lines.write("\b" * 40 + "\r 9/16 [==>..] - ETA: 0s - loss: 2.40")
    lines.flush()
    lines.write("\b" * 40 + "\r16/16 [=====] - 0s 1ms/step - loss: 2.3849 - accuracy: 0.1100\n")
    assert chunks == ["\r 1/16 [>....] - ETA: 3s - loss: 2.57", "\r 9/16 [==>..] - ETA: 0s - loss: 2.40",
                      "\r16/16 [=====] - 0s 1ms/step - loss: 2.3849 - accuracy: 0.1100\n"]
    keras = capture.KerasMetrics()
    found = [keras.feed("W pid=1", c) for c in chunks]
    assert found[:2] == [None, None] and found[2] == ({"loss": 2.3849, "accuracy": 0.11}, 1)
    assert keras.feed("W pid=1", "Epoch 3/5\n") is None
    assert keras.feed("W pid=1", "16/16 - 0s - loss: 2.3670 - accuracy: 0.0990 - 329ms/epoch - 21ms/step\n") == (
        {"loss": 2.367, "accuracy": 0.099}, 3)
    assert capture.split_ray_prefix("(Network pid=123) hello") == ("Network pid=123", "hello")
    assert capture.split_ray_prefix("(f pid=9, ip=10.0.0.2) x") == ("f pid=9, ip=10.0.0.2", "x")
    assert capture.split_ray_prefix("plain (not) a prefix") == (None, "plain (not) a prefix")
    assert capture.decode_forwarded(capture.REDRAW + " 3/16") == ("\r 3/16", None)


def test_an_actor_line_that_grows_is_forwarded_whole() -> None:
    """Dots flushed in an actor: each forwarded line is the whole line so far (Ray has no append)."""
    import io

    raw = io.StringIO()
    out = capture.ActorStream(raw)
    out.write("Loading")
    out.flush()
    out.write("...")
    out.flush()
    out.write(" done\n")
    pieces = capture.ForwardedPieces()
    shown = [capture.decode_forwarded(pieces.feed("W pid=1", line) or "")[0] for line in raw.getvalue().splitlines()]
    assert shown == ["\rLoading", "\rLoading...", "\rLoading... done\n"]


def test_a_forwarded_line_cut_in_pieces_is_joined_again() -> None:
    """Ray's log monitor can read a line the actor is still writing: the driver joins the pieces."""
    import io

    raw = io.StringIO()
    out = capture.ActorStream(raw)
    print("B line 3161", file=out)
    print("B line 3162", file=out)
    print("\u6570\u636e line", file=out)
    written = raw.getvalue()
    cut = written.index("B line 3162") + 2  # where a page boundary of the file fell
    lines = written[:cut].split("\n") + written[cut:].split("\n")  # what readline() returned
    pieces = capture.ForwardedPieces()
    got = [pieces.feed("Printer pid=7", line) for line in lines if line]
    assert [g for g in got if g is not None] == ["B line 3161", "B line 3162", "\u6570\u636e line"]
    assert got.count(None) == 1
    # A line without the marks (C code writing to the descriptor) passes as it came, and one
    # piece whose rest never comes is given back when the cell ends, not dropped.
    assert pieces.feed("Printer pid=7", "I0000 plain") == "I0000 plain"
    assert pieces.feed("Printer pid=8", capture.LINE_START + "half") is None
    assert pieces.feed("Printer pid=7", "other source") == "other source"
    assert pieces.drain() == [("Printer pid=8", "half")] and pieces.drain() == []


def test_no_character_an_actor_writes_straddles_a_page_of_its_file(tmp_path: Path) -> None:
    """A wide character cut by a page boundary reached the cell as two replacement characters."""
    path = tmp_path / "worker.out"
    with open(path, "w", encoding="utf-8") as raw:
        raw.write("x" * 4094)  # the next write starts two bytes before the first boundary
        raw.flush()
        out = capture.ActorStream(raw)
        lines = ["\u6570\u636e " * 3000, "plain", "\U0001f600 \x01 \x04\x04 \u6570" * 700]
        for line in lines:
            print(line, file=out)
    data = path.read_bytes()
    assert not [i for i in range(0, len(data), capture.PAGE) if 0x80 <= data[i] < 0xC0]
    # What the log monitor sees when it reads at each boundary: the driver gets every line back.
    cuts = list(range(0, len(data), capture.PAGE)) + [len(data)]
    text = "".join(data[a:b].decode("utf-8") + "\n" for a, b in zip(cuts, cuts[1:], strict=False))  # each decodes alone
    pieces = capture.ForwardedPieces()
    got = [pieces.feed("W pid=1", piece) for piece in text[4094:].splitlines() if piece]
    assert [g for g in got if g is not None] == lines


def test_framing_escapes_the_filler_and_moves_only_a_character_that_would_straddle() -> None:
    assert capture.page_safe("ab", 0) == capture.LINE_START + "ab" + capture.LINE_END + "\n"
    assert capture.page_safe("\u6570", 4094) == capture.LINE_START + capture.FILLER + "\u6570" + capture.LINE_END + "\n"
    assert capture.page_safe("\u6570", None) == capture.LINE_START + "\u6570" + capture.LINE_END + "\n"
    framed = capture.page_safe("a\x01b\x04c", 0)
    assert framed == capture.LINE_START + "a\x04\x01b\x04\x04c" + capture.LINE_END + "\n"
    assert capture.unframe(framed[1:-2]) == "a\x01b\x04c"


def test_partitions_rows_and_numpy() -> None:
    X = np.arange(50 * 784).reshape(50, 784)
    t = pa.table({"image": pa.array(list(X)), "label": np.arange(50), "b": [b"x"] * 50,
                  "s": [{"k": i} for i in range(50)]})
    parts = data.split(t, 2)
    assert [p.num_rows for p in parts] == [25, 25]
    row = next(data.rows(parts[1]))
    assert isinstance(row["image"], np.ndarray) and row["image"][0] == 25 * 784
    assert row["b"] == b"x" and row["s"] == {"k": 25} and row["label"] == 25
    img = data.column_numpy(parts[1], "image")
    assert img.shape == (25, 784) and not img.flags.writeable  # a view, no copy
    assert (img == X[25:]).all()
    ft = pa.table({"start": [10, 0], "offset": [1, 10], "value": [b"b", b"a" * 10]})
    assert [p.num_rows for p in data.split(ft, 4)] == [2]
    assert data.split(ft, 4)[0].column("start").to_pylist() == [0, 10]


def test_write_mnist_synthetic(tmp_path) -> None:
    from console.demo.datasets import write_mnist

    summary = write_mnist(str(tmp_path), synthetic=True, rows=1000, partitions=2)
    assert "synthetic" in summary and "1000 rows" in summary
    files = sorted(tmp_path.glob("part-*.parquet"))
    assert len(files) == 2
    t = pq.read_table(tmp_path)
    assert t.schema.field("image").type == pa.list_(pa.int64()) and t.num_rows == 1000
    assert pq.read_schema(files[0]).metadata[b"mlsql.synthetic"] == b"true"
    assert len(t.column("image")[0]) == 784 and set(t.column("label").to_pylist()) == set(range(10))


def test_ipc_files_kept_per_table_object(tmp_path) -> None:
    import gc
    import pickle

    from console.worker.cell import read_ipc
    from console.kernel.ipcfiles import IpcFiles

    files = IpcFiles(tmp_path, keep=2)
    a, b, c = (pa.table({"x": np.arange(10) + i}) for i in range(3))
    pa_path = files.path_for(a, tmp_path, "input.arrow")
    assert files.path_for(a, tmp_path, "input.arrow") == pa_path  # the same table: no second write
    assert read_ipc(pa_path).equals(a)
    pb = files.path_for(b, tmp_path, "input.arrow")
    files.path_for(c, tmp_path, "input.arrow")  # a third table evicts the oldest file
    assert not os.path.exists(pa_path) and os.path.exists(pb)
    del b
    gc.collect()
    assert not os.path.exists(pb)  # its table is gone, so is its file
    files.clear()
    assert not list(tmp_path.glob("table-*"))
    # a handle pickles without its in-process table; outside Ray it keeps the table it was given
    h = data.DataServer("h", 1, table=a, num_rows=10, local=a)
    assert pickle.loads(pickle.dumps(h))._local is None and pickle.loads(pickle.dumps(h)).arrow().equals(a)


def test_stale_scratch_folders_are_swept(tmp_path) -> None:
    import subprocess
    import sys

    from console.kernel.ipcfiles import sweep_stale

    # A folder whose owner exited (its lock went with it) goes; one whose owner still holds the
    # lock stays, whatever pid its name carries (sandboxed kernels see other pid numbers).
    dead = tmp_path / "mlsqlpy-999999-abc"
    dead.mkdir()
    (dead / ".owner").write_bytes(b"")
    (dead / "table-x.arrow").write_bytes(b"x")
    live = tmp_path / "mlsqlpy-1-def"
    live.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               f"fd = os.open({str(live / '.owner')!r}, os.O_CREAT | os.O_RDWR)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        (tmp_path / "mlsqlpy-old").mkdir()  # no PID in the name: not ours to judge
        sweep_stale(tmp_path)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["mlsqlpy-1-def", "mlsqlpy-old"])
    finally:
        holder.kill()
        holder.wait()
    sweep_stale(tmp_path)  # the owner is gone now
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlsqlpy-old"]


def test_a_lost_ray_client_server_is_told_from_a_refusal() -> None:
    from console.worker.ray_connect import client_server_lost

    # Both words in which CI's runs met ray-project/ray#63202, as the client raised them.
    proxy = ("Initialization failure from server:\nTraceback (most recent call last):\n  File \"…/proxier.py\", "
             "line 772, in Datapath\n    raise RuntimeError(\nRuntimeError: Starting Ray client server failed. "
             "See ray_client_server_23000.err for detailed logs.")
    zombie = ("Initialization failure from server:\nTraceback (most recent call last):\n  File \"…/proxier.py\", "
              "in start_specific_server\n    cmdline = proc.cmdline()\npsutil.ZombieProcess: process still exists "
              "but it's a zombie")
    reconnect = ("Request can't be sent because the Ray client has already been disconnected due to an error. "
                 "Last exception: <_InactiveRpcError of RPC that terminated with: status = StatusCode.NOT_FOUND "
                 'details = "Attempted to reconnect a session that has already been cleaned up">')
    assert client_server_lost(ConnectionAbortedError(proxy)) and client_server_lost(zombie)
    assert client_server_lost(ConnectionError(reconnect))  # the third word, a Daft driver's on CI
    assert not client_server_lost(ConnectionAbortedError("Initialization failure from server: token mismatch"))
