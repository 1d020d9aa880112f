"""MNIST as parquet with the seed's columns: image (784 longs) and label (long).

The real MNIST comes through Keras' loader where the network allows; otherwise (or with
synthetic=True) a learnable MNIST-shaped set: ten sparse class prototypes plus noise, seeded.
A synthetic set says so in the parquet metadata and in the summary.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SHAPE = 28 * 28
SCHEMA = pa.schema([pa.field("image", pa.list_(pa.int64())), pa.field("label", pa.int64())])


def synthetic_mnist(rows: int, seed: int = 0, keep: float = 0.5, noise: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Images 0..255 and labels 0..9, shaped and scaled like MNIST: dark background, bright strokes.

    Ten fixed sparse prototypes (15% of pixels); a sample keeps each prototype pixel with
    probability `keep` and lights stray pixels with probability `noise`. `seed` picks samples,
    so sets written with different seeds share the classes (a held-out set is another seed).
    Like MNIST, raw 0..255 values train with the seed's plain SGD without blowing up.
    """
    protos = np.random.default_rng(1234).random((10, SHAPE)) < 0.15
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, rows)
    on = (protos[labels] & (rng.random((rows, SHAPE)) < keep)) | (rng.random((rows, SHAPE)) < noise)
    images = np.where(on, rng.integers(128, 256, (rows, SHAPE)), 0)
    return images.astype(np.uint8), labels.astype(np.int64)


def _real_mnist() -> tuple[np.ndarray, np.ndarray]:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from tensorflow.keras.datasets import mnist  # downloads once into ~/.keras/datasets

    (x, y), _ = mnist.load_data()
    return x.reshape(len(x), SHAPE), y.astype(np.int64)


def to_table(images: np.ndarray, labels: np.ndarray, synthetic: bool) -> pa.Table:
    flat = pa.array(images.astype(np.int64).ravel())
    offsets = pa.array(np.arange(0, len(images) + 1, dtype=np.int32) * SHAPE)
    table = pa.Table.from_arrays([pa.ListArray.from_arrays(offsets, flat), pa.array(labels)], schema=SCHEMA)
    return table.replace_schema_metadata({"mlsql.dataset": "mnist", "mlsql.synthetic": str(synthetic).lower()})


def write_mnist(path: str, synthetic: bool = False, rows: int = 60000, partitions: int = 2, seed: int = 0) -> str:
    """Write MNIST (or the synthetic stand-in) as `partitions` parquet files in path; a summary line."""
    note = ""
    real: tuple[np.ndarray, np.ndarray] | None = None
    if not synthetic:
        try:
            images, labels = _real_mnist()
            real = images[:rows], labels[:rows]
        except Exception as exc:  # no network here: say so and fall back
            note = f" (real MNIST unavailable: {type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
            synthetic = True
    images, labels = real if real is not None else synthetic_mnist(rows, seed)
    table = to_table(images, labels, synthetic)
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("part-*.parquet"):
        old.unlink()
    bounds = np.linspace(0, table.num_rows, max(1, partitions) + 1).astype(int)
    for i in range(max(1, partitions)):
        pq.write_table(table.slice(bounds[i], bounds[i + 1] - bounds[i]), out / f"part-{i:05d}.parquet")
    kind = "synthetic MNIST-shaped data (class prototypes + noise)" if synthetic else "MNIST"
    return f"wrote {table.num_rows} rows of {kind} to {out} in {max(1, partitions)} parquet files{note}"
