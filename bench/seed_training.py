"""The seed notebook's training run through our product vs the same training as a plain Ray script.

All run on the same embedded Ray head (started first, not timed) with the same data:
- product: PythonRuntime.run of the seed's Python cell, unchanged, on a cold worker each time
  (worker start, Arrow hand-off, data servers, output capture, model rows back as a table);
- plain: a fresh `python` process (timed from launch to its last line) that reads the parquet
  itself and runs the same actors and rounds with the data passed as numpy, importing
  TensorFlow in the driver at the top as the seed cell does (`from tensorflow.keras import
  models,layers` is the cell's own code: a plain script with the seed's code pays it too);
- plain, lazy imports: the same script importing TensorFlow only inside the actors (the
  cheapest plain script; the gap to it includes the seed's driver-side import, ~2 s cold).
The three are interleaved in each repeat; medians are reported.
Usage: python bench/seed_training.py [--rows 10000] [--repeat 3]
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

PLAIN = r'''
import os, sys, time
from functools import reduce
t0 = time.perf_counter()
if sys.argv[3] == "seed-imports":
    from tensorflow.keras import models, layers
    from tensorflow.keras import utils as np_utils
import numpy as np, pyarrow.parquet as pq, ray
ray.init(address=sys.argv[1], runtime_env={"env_vars": {"TF_USE_LEGACY_KERAS": "1"}}, logging_level="ERROR")
table = pq.read_table(sys.argv[2])
half = table.num_rows // 2
parts = [table.slice(0, half), table.slice(half)]

def create_tf_model():
    from tensorflow.keras import models, layers
    network = models.Sequential()
    network.add(layers.Dense(512, activation="relu", input_shape=(28 * 28,)))
    network.add(layers.Dense(10, activation="softmax"))
    network.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=["accuracy"])
    return network

@ray.remote
class Network(object):
    def __init__(self, images, labels):
        from tensorflow.keras import utils as np_utils
        self.model = create_tf_model()
        self.train_images, self.train_labels = images, np_utils.to_categorical(labels)
    def train(self):
        return self.model.fit(self.train_images, self.train_labels, batch_size=128).history
    def get_weights(self):
        return self.model.get_weights()
    def set_weights(self, weights):
        self.model.set_weights(weights)
    def get_final_model(self):
        path = "/tmp/plain_bench_model_%d" % os.getpid()
        self.model.save(path)
        return [os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs]

def arrays(t):
    img = t.column("image").combine_chunks()
    return img.flatten().to_numpy().reshape(len(img), 784), t.column("label").to_numpy()

workers = [Network.remote(*arrays(p)) for p in parts]
ray.get([w.train.remote() for w in workers])
weights = ray.get([w.get_weights.remote() for w in workers])
for epoch in range(6):
    summed = reduce(lambda a, b: [x + y for x, y in zip(a, b)], weights)
    ray.get([w.set_weights.remote([l / 2 for l in summed]) for w in workers])
    ray.get([w.train.remote() for w in workers])
    weights = ray.get([w.get_weights.remote() for w in workers])
ray.get(workers[0].get_final_model.remote())
print("plain_done: %.2f" % (time.perf_counter() - t0), flush=True)
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import pyarrow.parquet as pq

    from console.config import load_config
    from console.kernel.job import PythonJob
    from console.kernel.python_runtime import PythonRuntime
    from console.cluster.guard import token_env
    from console.cluster.head import RAY_ENV, RayCluster
    from console.cluster.procs import free_port
    from console.demo.datasets import write_mnist

    work = Path(tempfile.mkdtemp(prefix="seedbench-"))
    write_mnist(str(work / "mnist"), synthetic=True, rows=args.rows, partitions=2)
    cfg = load_config({"DATA_DIR": str(work / "data"), "RAY_NUM_CPUS": 2, "RAY_CLIENT_PORT": free_port()})
    cluster = RayCluster(cfg)
    cluster.own()
    info = cluster.ensure()
    seed = (ROOT / "tests" / "python_cells" / "fixtures" / "seed_cell.txt").read_text().split("--%cache=true\n", 1)[1]
    runtime = PythonRuntime(cfg, lambda e: None)
    (work / "plain.py").write_text(PLAIN)
    # The embedded head takes drivers with its token only.
    env = {**os.environ, **RAY_ENV, **token_env(info.auth_token), "TF_USE_LEGACY_KERAS": "1"}
    ours, plain, lazy = [], [], []

    def run_plain(imports: str) -> float:
        """Launch to the script's last line: its exit (interpreter and TensorFlow teardown, Ray
        disconnect) is left out, as the product's worker teardown and ray.shutdown after the
        result are."""
        t0 = time.perf_counter()
        err = open(work / "plain.err", "w")  # a file, not a pipe: TensorFlow's chatter would fill a pipe
        proc = subprocess.Popen([sys.executable, str(work / "plain.py"), info.address, str(work / "mnist"),
                                 imports], env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        assert proc.stdout is not None  # stdout=PIPE
        done = None
        for line in proc.stdout:
            if line.startswith("plain_done:"):
                done = time.perf_counter() - t0
        if proc.wait() != 0 or done is None:
            err.close()
            tail = (work / "plain.err").read_text(errors="replace").splitlines()[-25:]
            raise RuntimeError(f"the plain script failed (exit {proc.returncode}); its stderr ends:\n"
                               + "\n".join(tail))
        err.close()
        return done

    try:
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            table = pq.read_table(work / "mnist")
            runtime.run(PythonJob(code=seed, conf={"schema": "file", "runIn": "driver", "dataMode": "model"},
                                  input_table=table))
            ours.append(time.perf_counter() - t0)
            runtime.shutdown()  # a cold worker each time, like the plain script's fresh process
            runtime = PythonRuntime(cfg, lambda e: None)
            plain.append(run_plain("seed-imports"))
            lazy.append(run_plain("lazy"))
    finally:
        runtime.shutdown()
        cluster.stop()
    o, p, q = statistics.median(ours), statistics.median(plain), statistics.median(lazy)
    print(f"seed_rows: {args.rows} rows, 2 actors, 7 rounds, {args.repeat} repeats, load {os.getloadavg()[0]:.2f}")
    print(f"seed_product: {o:.2f} s (seed cell unchanged, via PythonRuntime, cold worker; "
          f"min {min(ours):.2f}, max {max(ours):.2f})")
    print(f"seed_plain_ray: {p:.2f} s (same training as a plain Ray script, seed's imports; "
          f"min {min(plain):.2f}, max {max(plain):.2f})")
    print(f"seed_plain_ray_lazy_tf: {q:.2f} s (plain script importing TensorFlow only in actors; "
          f"min {min(lazy):.2f}, max {max(lazy):.2f})")
    print(f"seed_overhead: {o / p:.2f} x (target <= 1.15x)")
    print(f"seed_overhead_vs_lazy_tf: {o / q:.2f} x (info: includes the seed's own driver-side TF import)")


if __name__ == "__main__":
    main()
