"""`register Ray.`model` as f`: a model as a SQL function, served by Ray actors (console/kernel/raydeploy.py).

The first tests use a tiny "model" (a table of numbers) so that they need no TensorFlow; the last
one is the issue's: the seed notebook trains and saves the model, and Byzer's deploy-model code,
unchanged, registers it and predicts a held-out set in a select.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from console.config import load_config
from console.kernel import raydeploy
from console.kernel.session import Session
from tests.python_cells.test_seed import PYTHON_ENV, SEED_CELL

ENV_CELL = (f'!python env "PYTHON_ENV={PYTHON_ENV}";\n!python conf "runIn=driver";\n'
            '!python conf "schema=file";\n!python conf "dataMode=model";')

# A model that is a table of weights: init sums them (once per actor); each row's vectors are summed
# and scaled by that, with the actor's pid beside it.
TINY = """register Ray.`weights` as scaled_sum where maxConcurrency="{n}"
and registerCode='''
import os
import ray
from pyjava.api.mlsql import RayContext
from pyjava.udf import UDFBuilder

ray_context = RayContext.connect(globals(), context.conf["rayAddress"])

def init(model_refs, conf):
    print(f"restoring {{len(model_refs)}} rows")
    return float(sum(ray.get(ref)["w"] for ref in model_refs))

def predict_func(model, v):
    if v[0][0] < 0:
        raise ValueError("negative input")
    return {{"value": [[sum(x) * model for x in v] + [float(os.getpid())]]}}

UDFBuilder.build(ray_context, init, predict_func)
'''
and predictCode='''
from pyjava.api.mlsql import RayContext
from pyjava.udf import UDFBuilder
ray_context = RayContext.connect(globals(), context.conf["rayAddress"])
UDFBuilder.apply(ray_context)
''';
"""


@pytest.fixture(scope="module")
def session(ray_cfg: Any) -> Iterator[Session]:
    cfg = load_config({**ray_cfg, "DATA_DIR": ray_cfg["DATA_DIR"]})
    events: list[Any] = []
    s = Session(cfg, events.append, session_id="ray-udf")
    s.events = events  # type: ignore[attr-defined]
    yield s
    raydeploy.shutdown(s)
    s.shutdown()


def ok(session: Session, text: str, kind: str = "mlsql") -> Any:
    out = session.run_cell(text, kind=kind)
    assert out.ok, out.error
    return out


def test_tiny_model_runs_on_actors_in_batches(session: Session) -> None:
    ok(session, 'select 1.0 as w union all select 2.0 as w as weights;\n'
                'select cast(id as double) as x, cast(id * 2 as double) as y from range(3000) t(id) as points;\n'
                '!python conf "schema=st(field(content,string))";')  # a session schema the function must not use
    out = ok(session, TINY.format(n=8))
    assert out.result is not None and out.result.rows[0][:3] == ["scaled_sum", 2, 2]  # 8 asked, 2 CPUs
    out = ok(session, "select scaled_sum(array(array(x, y))) as r, x, y from points as scored;")
    rows = session.tables["scored"].to_pylist()
    assert len(rows) == 3000
    assert all(r["r"][0][0] == (r["x"] + r["y"]) * 3.0 for r in rows)
    pids = {r["r"][0][1] for r in rows}
    assert len(pids) == 2, "each batch is split over both actors"
    text = "".join(getattr(e, "text", "") for e in session.events)  # type: ignore[attr-defined]
    assert text.count("restoring 2 rows") <= 2  # once per actor, not per batch

    # null arguments give null results, without calling the model
    ok(session, "select scaled_sum(case when x % 2 = 0 then array(array(x)) end)[0][0] as r, x "
                "from points where x < 10 as halves;")
    halves = session.tables["halves"].to_pylist()
    assert [r["r"] for r in halves] == [0.0, None, 6.0, None, 12.0, None, 18.0, None, 24.0, None]

    # the user's error inside predict_func reaches the select, with the function's name
    bad = session.run_cell("select scaled_sum(array(array(-1.0)))[0][0] as r as broken;")
    assert not bad.ok and "scaled_sum" in bad.error.message and "negative input" in bad.error.message

    # registering again replaces the function (and its actors)
    ok(session, TINY.format(n=1))
    ok(session, "select scaled_sum(array(array(x, y))) as r from points as again;")
    assert len({r["r"][0][1] for r in session.tables["again"].to_pylist()}) == 1


def test_register_errors_name_what_is_wrong(session: Session) -> None:
    out = session.run_cell('register Ray.`wieghts` as f where registerCode=\'\'\'x = 1\'\'\';')
    assert not out.ok and "did you mean 'weights'" in out.error.message, out.error
    out = session.run_cell("register Ray.`weights` as f where maxConcurrency=\"2\";")
    assert not out.ok and "registerCode" in out.error.message
    out = session.run_cell("select 1.0 as w as weights;\nregister Ray.`weights` as f where registerCode='''\n"
                           "x = 1\ny = x / 0\n''';", cell=7)
    assert not out.ok and out.error.kind == "python" and out.error.line == 4, out.error


@pytest.mark.slow
def test_seed_model_as_sql_function_predicts_held_out_set(session: Session, ray_cfg: Any) -> None:
    from console.demo.datasets import write_mnist

    lake = Path(ray_cfg["DATA_DIR"]) / "lake"  # a sandboxed head's actors have a private /tmp
    write_mnist(str(lake / "udf_mnist"), synthetic=True, rows=3000, partitions=2)
    ok(session, f"load parquet.`{lake / 'udf_mnist'}` as mnist;")
    ok(session, ENV_CELL)
    ok(session, SEED_CELL, kind="python")
    ok(session, "save overwrite mnist_model as delta.`ai_model.mnist_model`;")

    held_out = lake / "udf_held_out"
    write_mnist(str(held_out), synthetic=True, rows=200, partitions=1, seed=5)
    ok(session, DEPLOY)
    ok(session, f"load parquet.`{held_out}` as mnist_data;\n"
                "select cast(image as array<double>) as image, label from mnist_data as mnist_test_data;\n"
                "select model_predict(array(image))[0][0] as predicted, label from mnist_test_data as output;")
    rows = session.tables["output"].to_pylist()
    accuracy = sum(r["predicted"] == r["label"] for r in rows) / len(rows)
    assert len(rows) == 200 and accuracy > 0.5, accuracy
    print(f"accuracy {accuracy:.3f}")
    debug = [e.text for e in session.events if getattr(e, "stream", "") == "system"]  # type: ignore[attr-defined]
    assert any(t.startswith("[model_predict] 200 rows in ") for t in debug), debug  # debugMode="true"


# Byzer's "deploy model" page, as written there (only the rayAddress value is this machine's).
DEPLOY = """!python conf "schema=st(field(content,string))";
!python conf "mode=model";
!python conf "runIn=driver";
!python conf "rayAddress=127.0.0.1:10001";

load delta.`ai_model.mnist_model` as mnist_model;

register Ray.`mnist_model` as model_predict where
maxConcurrency="8"
and debugMode="true"
and registerCode='''

import ray
import numpy as np
from pyjava.api.mlsql import RayContext
from pyjava.udf import UDFMaster,UDFWorker,UDFBuilder,UDFBuildInFunc

ray_context = RayContext.connect(globals(), context.conf["rayAddress"])

# predict function
def predict_func(model, v):
    test_images = np.array([v])
    predictions = model.predict(test_images.reshape((1,28*28)))
    return {"value":[[float(np.argmax(item)) for item in predictions]]}

# Submit the predictive function to ray_context
UDFBuilder.build(ray_context, UDFBuildInFunc.init_tf, predict_func)

''' and
predictCode='''

import ray
from pyjava.api.mlsql import RayContext
from pyjava.udf import UDFMaster,UDFWorker,UDFBuilder,UDFBuildInFunc

ray_context = RayContext.connect(globals(), context.conf["rayAddress"])

#
UDFBuilder.apply(ray_context)

''';
"""
