"""PythonRuntime end to end on the session's Ray head: data, output, errors, interrupt, reuse."""
from __future__ import annotations

import os
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from console.kernel.job import PythonCellError, PythonJob
from tests.support.procs import Proc, host_processes, running


def table(rows: int = 400) -> pa.Table:
    X = np.random.default_rng(0).integers(0, 255, (rows, 784))
    return pa.table({"image": pa.array(list(X)), "label": np.arange(rows) % 10})


def test_context_conf_rows_and_typed_result(runtime, events) -> None:
    code = ("print('conf', context.conf['k'])\n"
            "rows = list(context.fetch_once_as_rows())\n"
            "context.build_result([{'n': len(rows), 'first': int(rows[0]['image'][0])}])\n")
    out = runtime.run(PythonJob(code=code, conf={"k": "v", "schema": "n long, first long"}, input_table=table()))
    assert out.to_pylist() == [{"n": 400, "first": int(table().column("image")[0][0].as_py())}]
    assert events.text("driver") == "conf v\n"


def test_worker_reused_while_env_unchanged(runtime) -> None:
    pid = "import os; context.build_result([{'pid': os.getpid(), 'v': os.environ.get('MY_VAR', '')}])"
    a = runtime.run(PythonJob(code=pid)).to_pylist()[0]
    b = runtime.run(PythonJob(code=pid)).to_pylist()[0]
    c = runtime.run(PythonJob(code=pid, env={"MY_VAR": "x"})).to_pylist()[0]
    assert a["pid"] == b["pid"] != c["pid"] and c["v"] == "x"
    legacy = "context.build_result([{'legacy': __import__('os').environ['TF_USE_LEGACY_KERAS']}])"
    d = runtime.run(PythonJob(code=legacy))
    assert d.to_pylist() == [{"legacy": "1"}]


SEEDLIKE = '''
import os
import ray
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")
data_servers = ray_context.data_servers()
print(f"total workers {len(data_servers)}")

@ray.remote
class Network(object):
    def __init__(self, data_server):
        rows = [item for item in RayContext.collect_from([data_server])]
        self.x = RayContext.collect_numpy(data_server, "image")
        assert isinstance(rows[0]["image"], __import__("numpy").ndarray)
        print("rows", len(rows), self.x.shape)

    def work(self):
        for i in range(3):
            print(f"\\r step {i}/3", end="", flush=True)
            __import__("time").sleep(0.3)
        print("\\r step 3/3 - loss: 0.5 - accuracy: 0.9")
        return os.getpid()

workers = [Network.remote(s) for s in data_servers]
pids = ray.get([w.work.remote() for w in workers])
ray_context.log_metrics(step=7, custom=1.5)
ray_context.build_result([{"pid": p} for p in pids])
'''


def test_seedlike_actors_output_metrics_and_teardown(runtime, events) -> None:
    out = runtime.run(PythonJob(code=SEEDLIKE, conf={"schema": "st(field(pid,long))"}, input_table=table(),
                                code_line=3))
    pids = out.column("pid").to_pylist()
    assert len(pids) == 2  # the cluster has 2 CPUs -> 2 partitions by default
    assert "total workers 2\n" in events.text("driver")
    sources = {e.source for e in events if e.type == "output" and e.source.startswith("Network pid=")}
    assert sources == {f"Network pid={p}" for p in pids}
    for p in pids:
        mine = [e.text for e in events if e.type == "output" and e.source == f"Network pid={p}"]
        assert "rows 200 (200, 784)\n" in mine
        assert any(t.startswith("\r step 1/3") and not t.endswith("\n") for t in mine)  # a live redraw
        assert "\r step 3/3 - loss: 0.5 - accuracy: 0.9\n" in mine
    assert any(m.values == {"custom": 1.5} and m.step == 7 and m.source == "driver" for m in events.metrics())
    actors = host_processes(set(pids), cmdline="ray::Network")
    assert len(actors) == 2, f"both actors are found on this machine: {actors}"
    # `workers` holds them, so the session keeps its Ray job and they live on for later cells ...
    time.sleep(1.0)
    assert all(running(p) for p in actors), "actors held in a global ended with the cell"
    # ... until no global holds one: that cell's end ends the job, and the actors with it.
    runtime.run(PythonJob(code="del workers"))
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline and any(running(p) for p in actors):
        time.sleep(0.2)
    assert not any(running(p) for p in actors), "actors outlived the session's last handle"


ZERO_COPY = '''
import ray
from pyjava.api.mlsql import RayContext
rc = RayContext.connect(globals(), "127.0.0.1:10001")
servers = rc.data_servers()

@ray.remote
def look(server):
    x = RayContext.collect_numpy(server, "image")
    # mapped from the kernel's file: no object-store copy on a one-node cluster, a read-only view
    return server.ref is None, x.flags.owndata, x.flags.writeable, int(x[:, 0].sum()), server.path

got = ray.get([look.remote(s) for s in servers])
rc.build_result([{"no_put": g[0], "owndata": g[1], "writeable": g[2], "first": g[3], "path": g[4]} for g in got])
'''


def test_same_node_actors_map_the_kernels_file(runtime) -> None:
    t = table(40)
    out = runtime.run(PythonJob(code=ZERO_COPY, input_table=t)).to_pylist()
    assert [(r["no_put"], r["owndata"], r["writeable"]) for r in out] == [(True, False, False)] * 2
    images = np.array(t.column("image").to_pylist())
    assert sum(r["first"] for r in out) == int(images[:, 0].sum())
    again = runtime.run(PythonJob(code=ZERO_COPY, input_table=t)).to_pylist()
    assert {r["path"] for r in again} == {r["path"] for r in out}  # a later cell on the same table: no rewrite


def test_table_repartition_and_model_servers(runtime, tmp_path) -> None:
    from console.worker.schema import parse_schema, rows_to_table
    from console.worker.streaming_tar import build_rows_from_file

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "w.txt").write_text("weights")
    model = rows_to_table(list(build_rows_from_file(str(tmp_path / "m"))), parse_schema("file"))
    code = f'''
from pyjava.api.mlsql import RayContext
rc = RayContext.connect(globals(), None)
servers = RayContext.parse_servers(context.conf["modelServers"])
rc.fetch_as_dir({str(tmp_path / "restored")!r}, servers)
rc.build_result([{{"n": len(rc.data_servers()), "w": open({str(tmp_path / "restored" / "w.txt")!r}).read()}}])
'''
    out = runtime.run(PythonJob(code=code, input_table=table(30), model_table=model, num_partitions=3))
    assert out.to_pylist() == [{"n": 3, "w": "weights"}]


def test_foreach_and_map_iter_need_data_mode(runtime) -> None:
    code = ('from pyjava.api.mlsql import RayContext\n'
            'rc = RayContext.connect(globals(), "127.0.0.1:10001")\n'
            'rc.foreach(lambda row: {"label": int(row["label"]) * 2})\n')
    out = runtime.run(PythonJob(code=code, conf={"dataMode": "data", "schema": "st(field(label,long))"},
                                input_table=table(20)))
    assert sorted(out.column("label").to_pylist()) == sorted((np.arange(20) % 10 * 2).tolist())
    code2 = ('from pyjava.api.mlsql import RayContext\nrc = RayContext.connect(globals(), None)\n'
             'rc.map_iter(lambda rows: ({"n": 1} for r in rows))\n')
    with pytest.raises(PythonCellError, match="dataMode=data"):
        runtime.run(PythonJob(code=code2, input_table=table(5)))
    out2 = runtime.run(PythonJob(code=code2, conf={"dataMode": "data"}, input_table=table(5)))
    assert out2.num_rows == 5


def test_run_in_executor(runtime, events) -> None:
    code = ("import os\nfrom pyjava.api.mlsql import RayContext\n"
            "rc = RayContext.connect(globals(), '127.0.0.1:10001')\n"
            "print('in actor', sum(len(list(RayContext.collect_from([s]))) for s in rc.data_servers()))\n"
            "rc.build_result([{'pid': os.getpid()}])\n")
    out = runtime.run(PythonJob(code=code, conf={"runIn": "executor"}, input_table=table(10)))
    pid = out.column("pid")[0].as_py()
    assert pid != os.getpid()
    assert any(e.text == "in actor 10\n" and e.source == f"CellExecutor pid={pid}"
               for e in events if e.type == "output")


# ---------------------------------------------------------------- errors


def test_cell_that_raises_has_cell_line_numbers(runtime) -> None:
    code = "x = 1\n\ndef f():\n    return 1 / 0\n\nf()\n"
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code=code, code_line=5))  # the code starts on line 5 of the cell
    err = info.value
    assert err.kind == "python" and err.message == "ZeroDivisionError: division by zero"
    assert err.line == 8
    assert 'File "<cell>", line 10, in <module>' in err.traceback
    assert 'File "<cell>", line 8, in f' in err.traceback and "return 1 / 0" in err.traceback
    assert "console/worker" not in err.traceback and "worker.py" not in err.traceback


def test_error_inside_an_actor(runtime) -> None:
    code = ("import ray\nfrom pyjava.api.mlsql import RayContext\nRayContext.connect(globals(), '127.0.0.1:10001')\n"
            "@ray.remote\nclass A:\n    def f(self):\n        raise ValueError('bad actor')\n"
            "ray.get(A.remote().f.remote())\n")
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code=code))
    assert info.value.kind == "python" and "ValueError: bad actor" in info.value.message
    assert 'File "<cell>", line 7, in f' in info.value.traceback


def test_schema_mismatch(runtime) -> None:
    code = "context.build_result([{'a': 1}, {'a': 'two'}])\n"
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code=code, conf={"schema": "st(field(a,long))"}))
    assert info.value.kind == "schema"
    assert "row 1, value 'a' = 'two' (str) does not fit schema column 1 `a int64`" in info.value.message
    assert info.value.line == 1


@pytest.mark.parametrize("code, expected", [
    ("import os\nos._exit(3)\n", "the Python worker died: exit code 3"),
    ("import ctypes\nctypes.string_at(0)\n", "the Python worker died: killed by SIGSEGV"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "killed by SIGKILL (killed: out of memory?)"),
])
def test_worker_crash_then_fresh_worker(runtime, code, expected) -> None:
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code=code))
    assert info.value.kind == "worker" and expected in info.value.message
    assert runtime.run(PythonJob(code="context.build_result([{'ok': 1}])")).to_pylist() == [{"ok": 1}]


FD_LEVEL = """
import os, subprocess
os.write(1, b"from fd 1\\n")
subprocess.run(["echo", "from a subprocess"], check=True)
print("from print")
os.write(2, b"a partial line on fd 2")
"""


def test_fd_level_output_is_the_cells_own(runtime, events) -> None:
    # Written below Python, this output reaches the kernel on the worker's stdout/stderr pipes,
    # not on its socket; run() returns only once both pipes were read up to the cell's end.
    runtime.run(PythonJob(code=FD_LEVEL))
    lines = {(e.text, e.stream) for e in events if e.type == "output" and e.source == "driver"}
    assert lines == {("from fd 1\n", "stdout"), ("from a subprocess\n", "stdout"), ("from print\n", "stdout"),
                     ("a partial line on fd 2", "stderr")}
    events.clear()
    runtime.run(PythonJob(code="print('next')"))
    assert events.text() == "next\n"


def test_a_dying_workers_last_words_are_shown(runtime, events) -> None:
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code="import os\nos.write(2, b'last words\\n')\nos._exit(3)\n"))
    assert info.value.kind == "worker" and "exit code 3" in info.value.message
    assert ("last words\n", "stderr") in {(e.text, e.stream) for e in events if e.type == "output"}


def test_a_cell_deaf_to_sigint_is_killed_after_the_grace(runtime) -> None:
    from console.kernel.python_runtime import INTERRUPT_GRACE

    threading.Timer(1.0, runtime.interrupt).start()
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code="import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                   "time.sleep(120)\n"))
    # The kill's own words say it came after the grace, not the cell's 120 s.
    assert info.value.kind == "interrupted"
    assert f"did not stop within {INTERRUPT_GRACE:g} s and was killed" in info.value.message
    assert runtime.run(PythonJob(code="context.build_result([{'ok': 1}])")).to_pylist() == [{"ok": 1}]


def test_failing_python_env(runtime) -> None:
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code="print(1)", env={"PYTHON_ENV": "source /nonexistent/bin/activate"}))
    assert info.value.kind == "env"
    assert "/nonexistent/bin/activate: No such file or directory" in info.value.message
    ok = runtime.run(PythonJob(code="context.build_result([{'ok': 1}])",
                               env={"PYTHON_ENV": f"source {os.path.dirname(os.sys.executable)}/activate"}))
    assert ok.to_pylist() == [{"ok": 1}]


def test_interrupt_during_sleep_in_driver(runtime) -> None:
    timer = threading.Timer(1.5, runtime.interrupt)
    timer.start()
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code="import time\nprint('start', flush=True)\ntime.sleep(60)\n"))
    assert info.value.kind == "interrupted"
    assert info.value.line == 3


def _interrupt_once_printed(runtime, events, text: str) -> None:
    """Interrupt the running cell once it has printed `text` (a line of its own)."""
    def wait_then_interrupt() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(e.type == "output" and e.text == text for e in list(events)):
            time.sleep(0.05)
        runtime.interrupt()

    threading.Thread(target=wait_then_interrupt, daemon=True).start()


def _worker_pid(runtime) -> int:
    return runtime.run(PythonJob(code="import os\ncontext.build_result([{'pid': os.getpid()}])")).to_pylist()[0]["pid"]


def test_an_interrupt_that_library_code_turns_into_another_error_still_ends_as_interrupted(runtime, events) -> None:
    # TensorFlow's C code does this when SIGINT lands inside it: the cell then raises
    # "SystemError: Objects/listobject.c:338: bad argument to internal function" (seen in a CI run
    # where the Keras fit below in test_interrupt_model_fit_in_driver ended as a Python error).
    code = ("import time\nprint('ready', flush=True)\ntry:\n    time.sleep(60)\n"
            "except KeyboardInterrupt:\n    pass\nraise SystemError('bad argument to internal function')\n")
    _interrupt_once_printed(runtime, events, "ready\n")
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code=code))
    assert info.value.kind == "interrupted", info.value
    assert "SystemError: bad argument to internal function" in info.value.message


def test_an_interrupt_swallowed_once_is_sent_again_and_the_worker_stays(runtime, events) -> None:
    before = _worker_pid(runtime)
    code = ("import time\nprint('ready', flush=True)\ntry:\n    time.sleep(60)\n"
            "except KeyboardInterrupt:\n    print('swallowed', flush=True)\ntime.sleep(60)\n")
    _interrupt_once_printed(runtime, events, "ready\n")
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code=code))
    assert info.value.kind == "interrupted" and info.value.line == 7, info.value
    assert "killed" not in info.value.message  # before: killed after the 10 s grace, the session's state lost
    assert "swallowed\n" in events.text("driver")
    assert _worker_pid(runtime) == before


FIT_IN_ACTORS = '''
import ray
import numpy as np
from pyjava.api.mlsql import RayContext
ray_context = RayContext.connect(globals(), "127.0.0.1:10001")

@ray.remote
class Trainer:
    def fit(self):
        from tensorflow.keras import models, layers
        model = models.Sequential([layers.Dense(8, activation="relu", input_shape=(16,)), layers.Dense(2)])
        model.compile(optimizer="sgd", loss="mse")
        print("fit starts", flush=True)
        model.fit(np.random.rand(4096, 16), np.random.rand(4096, 2), epochs=1000, batch_size=8, verbose=0)

trainers = [Trainer.remote() for _ in range(2)]
ray.get([t.fit.remote() for t in trainers])
'''


def test_interrupt_during_model_fit_in_actors(runtime, events) -> None:
    actors: set[Proc] = set()

    def interrupt_when_fitting() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len([e for e in list(events)
                                                   if e.type == "output" and e.text == "fit starts\n"]) < 2:
            time.sleep(0.1)
        time.sleep(0.5)
        ns_pids = {int(e.source.split("pid=")[1]) for e in list(events)
                   if e.type == "output" and e.source.startswith("Trainer pid=")}
        actors.update(host_processes(ns_pids, cmdline="ray::Trainer"))
        runtime.interrupt()

    thread = threading.Thread(target=interrupt_when_fitting, daemon=True)
    thread.start()
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code=FIT_IN_ACTORS, code_line=2))
    assert info.value.kind == "interrupted" and info.value.line == 18
    assert len(actors) == 2, f"both fitting actors are found on this machine: {actors}"
    # `trainers` holds the actors, which would keep the session's Ray job; the interrupt ends it
    # right after the cell reports, and Ray then kills the job's actors (a moment on a loaded machine).
    assert any("the interrupt ends this session's Ray job" in e.text for e in events if e.type == "output")
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline and any(running(p) for p in actors):
        time.sleep(0.2)
    assert not any(running(p) for p in actors), "the cell's actors outlived the interrupt"
    assert runtime.run(PythonJob(code="context.build_result([{'ok': 1}])")).to_pylist() == [{"ok": 1}]


def test_interrupt_model_fit_in_driver(runtime, events) -> None:
    code = FIT_IN_ACTORS.split("@ray.remote")[0] + '''
from tensorflow.keras import models, layers
model = models.Sequential([layers.Dense(8, activation="relu", input_shape=(16,)), layers.Dense(2)])
model.compile(optimizer="sgd", loss="mse")
print("fit starts", flush=True)
model.fit(np.random.rand(4096, 16), np.random.rand(4096, 2), epochs=1000, batch_size=8, verbose=0)
'''
    def interrupt_when_fitting() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(e.type == "output" and e.text == "fit starts\n"
                                                      for e in list(events)):
            time.sleep(0.1)
        time.sleep(0.5)
        runtime.interrupt()

    threading.Thread(target=interrupt_when_fitting, daemon=True).start()
    with pytest.raises(PythonCellError) as info:
        runtime.run(PythonJob(code=code))
    assert info.value.kind == "interrupted", f"{info.value.kind}: {info.value}\n{getattr(info.value, 'traceback', '')}"
