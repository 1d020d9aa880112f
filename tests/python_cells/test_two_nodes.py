"""A two-node cluster on this machine: a head plus a second `ray start` node joined by address.

Cells run unchanged through CONSOLE_RAY_ADDRESS (nothing embedded is started); each node has
one CPU, so the two actors of a 2-partition cell land on different nodes and one reads its
partition from the other node's object store. Both nodes are stopped by their own PIDs.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from console.config import load_config
from console.kernel.job import PythonJob
from console.cluster.head import short_temp_dir, start_head
from console.cluster.procs import free_port, stop_process_group
from tests.python_cells.test_runtime import SEEDLIKE, table


@pytest.mark.slow
def test_cell_on_head_plus_joined_node(tmp_path) -> None:
    from console.kernel.python_runtime import PythonRuntime

    multi = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}  # Ray's multi-node addressing (eth0, not loopback)
    head = start_head(short_temp_dir(tmp_path / "head"), num_cpus=1, client_port=free_port(), env=multi)
    node = None
    try:
        node = start_head(short_temp_dir(tmp_path / "node"), num_cpus=1, address=head.address,
                          resources={"second_node": 1}, env=multi)
        # Each node keeps its own start log: a short temp dir's parent is /tmp, and a log shared
        # there let another test's head's "Ray runtime started." pass for this one's.
        assert (Path(head.temp_dir) / "ray-start.log").read_text().count("Ray runtime started.") == 1
        cfg = load_config({"DATA_DIR": str(tmp_path / "data"), "RAY_ADDRESS": head.address})
        events: list = []
        runtime = PythonRuntime(cfg, events.append)
        try:
            code = SEEDLIKE + ("import ray as _r\n"
                               "print('nodes', len([n for n in _r.nodes() if n['Alive']]))\n")
            out = runtime.run(PythonJob(code=code, conf={"schema": "st(field(pid,long))"}, input_table=table(),
                                        num_partitions=2))
            assert out.num_rows == 2
            text = "".join(e.text for e in events if e.type == "output")
            assert "nodes 2\n" in text and "total workers 2\n" in text
            assert text.count("rows 200 (200, 784)\n") == 2
        finally:
            runtime.shutdown()
        assert not (tmp_path / "data" / "server" / "head.json").exists()  # nothing embedded was started
    finally:
        if node is not None:
            stop_process_group(node.pid, grace=3.0)
        stop_process_group(head.pid, grace=3.0)
