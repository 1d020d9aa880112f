"""The seed model as a SQL function (`register Ray … as model_predict`) vs calling the model in a plain loop.

Setup (not timed): an embedded Ray head (2 CPUs), the seed notebook's Python cell trains the
model on synthetic MNIST in a Session, and Byzer's deploy-model code registers it
(maxConcurrency="8": two actors on this 2-CPU head), which restores the model in each actor.
Timed, interleaved, medians:
- select: `select model_predict(array(image))[0][0] as predicted, label from held_out as output`
  through the Session (DuckDB batches -> the model-function worker -> the actors);
- direct loop: a fresh `python` process with the same model loaded, calling the docs'
  predict_func on the same rows one by one (Byzer's per-row call), the model load not timed;
- direct batch (info): one model.predict over all rows, what a hand-written batch job does.
Usage: python bench/model_udf.py [--rows 400] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.python_cells.test_ray_udf import DEPLOY, ENV_CELL  # noqa: E402
from tests.python_cells.test_seed import SEED_CELL  # noqa: E402

DIRECT = r'''
import sys, time
import numpy as np, pyarrow.parquet as pq
import tensorflow as tf
model = tf.keras.models.load_model(sys.argv[1])
tf.keras.utils.disable_interactive_logging()  # as in the actors: no progress bar per row
table = pq.read_table(sys.argv[2])
images = [[v] for v in table.column("image").to_pylist()]  # array(image): one vector per row

def predict_func(model, v):
    test_images = np.array([v])
    predictions = model.predict(test_images.reshape((1,28*28)))
    return {"value":[[float(np.argmax(item)) for item in predictions]]}

predict_func(model, images[0])  # warm, as the actors are after registering
for line in sys.stdin:  # one mode per line, run when asked: never beside the select
    mode = line.strip()
    t0 = time.perf_counter()
    if mode == "loop":
        out = [predict_func(model, v)["value"] for v in images]
    else:
        out = model.predict(np.array(images, dtype="float64").reshape((len(images), 784)), verbose=0)
    print("%s: %.4f %d" % (mode, time.perf_counter() - t0, len(out)), flush=True)
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from console.cluster.head import RAY_ENV, RayCluster
    from console.cluster.procs import free_port
    from console.config import load_config
    from console.demo.datasets import write_mnist
    from console.kernel import raydeploy
    from console.kernel.session import Session
    from console.worker.streaming_tar import save_rows_as_file

    work = Path(tempfile.mkdtemp(prefix="udfbench-"))
    cfg = load_config({"DATA_DIR": str(work / "data"), "RAY_NUM_CPUS": 2, "RAY_CLIENT_PORT": free_port()})
    train = cfg.data_dir / "lake" / "mnist"  # the lake: a sandboxed head's actors have a private /tmp
    write_mnist(str(train), synthetic=True, rows=3000, partitions=2)
    held_out = cfg.data_dir / "lake" / "held_out"
    write_mnist(str(held_out), synthetic=True, rows=args.rows, partitions=1, seed=11)
    cluster = RayCluster(cfg)
    cluster.own()
    cluster.ensure()
    session = Session(cfg, lambda e: None, session_id="udf-bench")

    def cell(text: str, kind: str = "mlsql") -> None:
        out = session.run_cell(text, kind=kind)
        if not out.ok:
            raise SystemExit(f"setup cell failed: {out.error}")

    selects, loops, batches = [], [], []
    try:
        cell(f"load parquet.`{train}` as mnist;")
        cell(ENV_CELL)
        cell(SEED_CELL, kind="python")
        cell("save overwrite mnist_model as delta.`ai_model.mnist_model`;")
        cell(DEPLOY.replace('debugMode="true"', 'debugMode="false"'))
        cell(f"load parquet.`{held_out}` as raw;\n"
             "select cast(image as array<double>) as image, label from raw as held_out;")
        model_dir = work / "model"
        save_rows_as_file(session.tables["mnist_model"].sort_by("start").to_pylist(), str(model_dir))
        (work / "direct.py").write_text(DIRECT)
        env = {**os.environ, **RAY_ENV, "TF_USE_LEGACY_KERAS": "1"}
        proc = subprocess.Popen([sys.executable, str(work / "direct.py"), str(model_dir), str(held_out)],
                                env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        assert proc.stdin is not None and proc.stdout is not None  # PIPEs
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            cell("select model_predict(array(image))[0][0] as predicted, label from held_out as output;")
            selects.append(time.perf_counter() - t0)
            for mode in ("loop", "batch"):  # then the direct process, alone on the CPUs
                proc.stdin.write(mode + "\n")
                proc.stdin.flush()
                answer = proc.stdout.readline().split()
                if not answer:
                    raise SystemExit("the direct process failed")
                (loops if mode == "loop" else batches).append(float(answer[1]))
        proc.stdin.close()
        proc.wait()
        rows = session.tables["output"].to_pylist()
        accuracy = sum(r["predicted"] == r["label"] for r in rows) / len(rows)
    finally:
        raydeploy.shutdown(session)
        session.shutdown()
        cluster.stop()
    n = args.rows
    s, lp, b = n / statistics.median(selects), n / statistics.median(loops), n / statistics.median(batches)
    print(f"udf_rows: {n} held-out rows, 2 actors, {args.repeat} repeats, accuracy {accuracy:.3f}, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"udf_select: {s:.1f} rows/s (select model_predict(array(image))[0][0], docs' code unchanged)")
    print(f"udf_direct_loop: {lp:.1f} rows/s (same predict_func per row in one plain Keras process)")
    print(f"udf_direct_batch: {b:.1f} rows/s (info: one model.predict over all rows)")
    print(f"udf_vs_direct_loop: {s / lp:.2f} x (target >= 1.0x: two actors against one loop)")


if __name__ == "__main__":
    main()
