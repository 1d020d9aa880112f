"""Fixtures for the sources tests: a SourceContext over tmp_path and small sample tables."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from console.sources import SourceContext


@pytest.fixture
def ctx(tmp_path: Path) -> SourceContext:
    data = tmp_path / "data"
    (data / "lake").mkdir(parents=True)  # relative paths resolve in the lake
    return SourceContext(data_dir=data)


@pytest.fixture
def people() -> pa.Table:
    return pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "name": pa.array(["ann", "bob", None, "dee"], pa.string()),
        "score": pa.array([1.5, 2.0, 3.25, None], pa.float64()),
        "team": pa.array(["a", "b", "a", "b"], pa.string()),
    })


@pytest.fixture
def rows():
    """Rows of a table sorted by a key, for comparing tables whose row order is not defined."""

    def sort(table: pa.Table, key: str = "id") -> list[dict]:
        return sorted(table.to_pylist(), key=lambda r: (r[key] is None, r[key]))

    return sort
