"""The embedded head starts from a data folder of any path length (issue 28, robustness).

Ray's Unix socket paths have a 107-byte limit, so under a long data dir the temp dir is a short
folder elsewhere; the head's start log still lives in the data dir's ray/ folder, which nobody
made in that case, and the start failed with FileNotFoundError.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from console.cluster.head import RayCluster, short_temp_dir
from console.cluster.procs import free_port
from console.config import load_config

pytestmark = pytest.mark.ray


def test_a_head_starts_under_a_long_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / ("a-folder-with-a-rather-long-name-" * 2) / "console-data"
    assert short_temp_dir(data_dir.resolve()) != data_dir.resolve() / "ray" / "tmp"  # the long case
    cfg = load_config({"DATA_DIR": str(data_dir), "RAY_NUM_CPUS": 1, "RAY_CLIENT_PORT": free_port(), "SANDBOX": "off"})
    cluster = RayCluster(cfg)
    cluster.own()
    try:
        info = cluster.ensure()
        assert info.address and (data_dir / "ray" / "ray-start.log").exists()
        assert short_temp_dir(data_dir.resolve()).is_dir()
    finally:
        cluster.stop(grace=3.0)
    # The short temp dir is outside the data dir: the head's stop removes it (it was left before).
    assert not short_temp_dir(data_dir.resolve()).exists()
