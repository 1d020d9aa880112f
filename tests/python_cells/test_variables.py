"""The variable explorer lists globals by metadata only (issue 34, item 3): nothing it shows computes."""
from __future__ import annotations

import numpy as np

from console.worker.variables import variables


class Lazy:
    """Like a lazy DataFrame: its repr and len would run the whole plan."""

    def __repr__(self) -> str:
        raise AssertionError("repr computed")

    def __len__(self) -> int:
        raise AssertionError("len computed")


def test_names_types_sizes_and_short_values_without_computing_anything() -> None:
    import math

    ns = {"arr": np.zeros((3, 4)), "name": "ada", "xs": list(range(100)), "lazy": Lazy(), "n": 3,
          "math": math, "f": len, "_hidden": 1, "context": object()}
    got = {v["name"]: v for v in variables(ns)}
    assert sorted(got) == ["arr", "lazy", "n", "name", "xs"]
    assert got["arr"]["type"] == "numpy.ndarray" and got["arr"]["size"] == "3×4"
    assert got["arr"]["value"].startswith("[[0.")
    assert got["name"] == {"name": "name", "type": "str", "size": "3", "value": "'ada'"}
    assert got["xs"]["size"] == "100" and got["xs"]["value"].endswith("...]") and len(got["xs"]["value"]) < 60
    assert got["lazy"]["value"] == "" and got["lazy"]["size"] == ""  # its type only
    assert got["n"]["value"] == "3"
