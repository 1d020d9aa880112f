"""The seed article's Python cell, unchanged, trains on 2 Ray actors; its model predicts well.

The dataset is written to a temporary folder, not /tmp/mnist: this machine is shared, and a
test must not overwrite (or depend on) what someone else keeps there. Only the load path of
the seed notebook is substituted (and PYTHON_ENV, as the issue allows).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from console.kernel.job import PythonJob

SEED_CELL = (Path(__file__).parent / "fixtures" / "seed_cell.txt").read_text(encoding="utf-8")
SEED_CODE = SEED_CELL.split("--%cache=true\n", 1)[1]  # what the cell compiles to: the code after the headers
SEED_CONF = {"runIn": "driver", "schema": "file", "dataMode": "model"}
PYTHON_ENV = f"source {Path(sys.executable).parent}/activate"

PREDICT = '''
import tempfile
from tensorflow.keras import models
from pyjava.api.mlsql import RayContext

ray_context = RayContext.connect(globals(), None)
model_servers = RayContext.parse_servers(ray_context.conf()["modelServers"])
model_dir = tempfile.mkdtemp()
ray_context.fetch_as_dir(model_dir, model_servers)
model = models.load_model(model_dir)
rows = []
for server in ray_context.data_servers():
    images = RayContext.collect_numpy(server, "image")
    labels = RayContext.collect_numpy(server, "label")
    predicted = model.predict(images, verbose=0).argmax(axis=1)
    rows.extend({"actual": int(a), "predicted": int(p)} for a, p in zip(labels, predicted))
ray_context.build_result(rows)
'''


def test_seed_cell_is_verbatim() -> None:
    assert SEED_CELL.startswith("--%python\n--%input=mnist\n--%output=mnist_model\n--%cache=true\n")
    assert 'ray_context = RayContext.connect(globals(),"127.0.0.1:10001")' in SEED_CODE
    assert SEED_CODE.rstrip().endswith("ray_context.build_result(model_binary)")


@pytest.fixture(scope="module")
def seed_model(runtime_module, mnist_dir):
    runtime, events = runtime_module
    table = pq.read_table(mnist_dir)
    out = runtime.run(PythonJob(code=SEED_CODE, conf=dict(SEED_CONF), env={"PYTHON_ENV": PYTHON_ENV},
                                input_name="mnist", input_table=table, output_name="mnist_model", code_line=6))
    return out, list(events)


@pytest.fixture(scope="module")
def runtime_module(_runtime_and_sink):
    from tests.python_cells.conftest import Events

    runtime, sink = _runtime_and_sink
    sink[0] = events = Events()
    return runtime, events


def test_seed_trains_on_two_actors_and_returns_a_file_table(seed_model) -> None:
    out, events = seed_model
    assert out.column_names == ["start", "offset", "value"] and out.num_rows > 3
    assert "total workers 2\n" in "".join(e.text for e in events if e.type == "output" and e.source == "driver")
    metrics = [e for e in events if e.type == "metrics"]
    sources = {m.source for m in metrics}
    assert len(sources) == 2 and all(s.startswith("Network pid=") for s in sources)
    for s in sources:  # one fit per round: 1 + 6 epochs per actor, with loss and accuracy
        steps = [m.step for m in metrics if m.source == s]
        assert steps == list(range(1, 8))
        assert {"loss", "accuracy"} <= set(metrics[0].values)
    redraws = [e for e in events if e.type == "output" and e.text.startswith("\r") and not e.text.endswith("\n")]
    assert redraws, "the Keras progress bar should reach the stream while an epoch runs"


def test_seed_model_predicts_held_out_set(seed_model, runtime_module, tmp_path) -> None:
    from console.demo.datasets import write_mnist

    runtime, _ = runtime_module
    write_mnist(str(tmp_path), synthetic=True, rows=600, partitions=1, seed=99)
    result = runtime.run(PythonJob(code=PREDICT, conf={"schema": "st(field(actual,long),field(predicted,long))"},
                                   env={"PYTHON_ENV": PYTHON_ENV}, input_table=pq.read_table(tmp_path),
                                   model_table=seed_model[0]))
    rows = result.to_pylist()
    accuracy = sum(r["actual"] == r["predicted"] for r in rows) / len(rows)
    assert len(rows) == 600 and accuracy > 0.6, accuracy
