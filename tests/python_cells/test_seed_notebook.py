"""The seed notebook through `mlsql-console run` (engine.headless.run_file), then a prediction notebook.

Cells: the seed's load (path substituted: see test_seed.py), its four `!python` lines
(PYTHON_ENV replaced by this machine's venv), the Python cell verbatim, and the delta save.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.python_cells.test_seed import PYTHON_ENV, SEED_CELL

PREDICT_CELL = '''--%python
--%input=test_data
--%model=mnist_model
--%output=predictions

import tempfile
import numpy as np
from tensorflow.keras import models
from pyjava.api.mlsql import RayContext

ray_context = RayContext.connect(globals(), None)
model_servers = RayContext.parse_servers(ray_context.conf()["modelServers"])
model_dir = tempfile.mkdtemp()
ray_context.fetch_as_dir(model_dir, model_servers)
model = models.load_model(model_dir)
items = list(ray_context.collect())
images = np.array([item["image"] for item in items])
predicted = model.predict(images, verbose=0).argmax(axis=1)
ray_context.build_result([{"actual": int(item["label"]), "predicted": int(p)} for item, p in zip(items, predicted)])
'''


def notebook(path, cells) -> str:
    path.write_text(json.dumps({"format": "mlsql-console-notebook", "version": 1, "name": path.stem,
                                "cells": [{"kind": k, "source": s} for k, s in cells]}))
    return str(path)


@pytest.mark.slow
def test_seed_notebook_runs_unchanged_then_model_predicts(ray_cfg, mnist_dir, tmp_path) -> None:
    from console.kernel.headless import run_file
    from console.demo.datasets import write_mnist

    seed = notebook(tmp_path / "seed.json", [
        ("mlsql", f"load parquet.`{mnist_dir}` as mnist;"),
        ("mlsql", f'!python env "PYTHON_ENV={PYTHON_ENV}";\n!python conf "runIn=driver";\n'
                  '!python conf "schema=file";\n!python conf "dataMode=model";'),
        ("python", SEED_CELL),
        ("mlsql", "save overwrite mnist_model as delta.`ai_model.mnist_model`;"),
    ])
    lines: list[str] = []
    assert run_file(seed, ray_cfg, out=lines.append) == 0, "\n".join(lines[-40:])
    log = "\n".join(lines)
    assert "[driver] total workers 2" in log
    assert re.search(r"\[Network pid=\d+\] metrics step=7: loss=", log)

    from deltalake import DeltaTable

    model = DeltaTable(str(ray_cfg.data_dir / "lake" / "ai_model" / "mnist_model")).to_pyarrow_table()
    assert model.column_names == ["start", "offset", "value"] and model.num_rows > 3

    held_out = tmp_path / "held_out"
    write_mnist(str(held_out), synthetic=True, rows=300, partitions=1, seed=7)
    predict = notebook(tmp_path / "predict.json", [
        ("mlsql", "load delta.`ai_model.mnist_model` as mnist_model;\n"
                  f"load parquet.`{held_out}` as test_data;\n"
                  '!python conf "schema=st(field(actual,long),field(predicted,long))";'),
        ("python", PREDICT_CELL),
        ("mlsql", "select avg(case when actual = predicted then 1.0 else 0.0 end) as accuracy, count(*) as n "
                  "from predictions as acc;"),
    ])
    lines = []
    assert run_file(predict, ray_cfg, out=lines.append) == 0, "\n".join(lines[-40:])
    tail = "\n".join(lines[lines.index(next(line for line in lines if line.startswith("-- cell 3"))):])
    accuracy = float(re.search(r"(\d\.\d+)\s*\|?\s*300", tail).group(1))
    assert accuracy > 0.6, tail
