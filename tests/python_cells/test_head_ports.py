"""A head whose chosen port is taken before Ray binds it starts again on other ports.

free_ports() closes its sockets before `ray start` binds them, so on a busy machine another
process (another node's component, a client's own port) can take one in between. The GCS port
is taken here for real, by a listening socket, on the first choice only."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from console.cluster import head
from console.cluster.procs import free_ports, stop_process_group


def test_a_head_whose_gcs_port_was_taken_starts_on_other_ports(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    taken = squatter.getsockname()[1]
    choices: list[list[int]] = []

    def first_with_the_gcs_port_taken(n: int, host: str = "127.0.0.1", avoid: tuple[int, ...] = ()) -> list[int]:
        ports = free_ports(n, host, avoid)
        if not choices:
            ports[3] = taken  # start_head's fourth port is the GCS's
        choices.append(ports)
        return ports

    monkeypatch.setattr(head, "free_ports", first_with_the_gcs_port_taken)
    info = None
    try:
        info = head.start_head(head.short_temp_dir(tmp_path), num_cpus=1, client_port=free_ports(1)[0],
                               autoscaler=False)
        assert len(choices) == 2 and info.address == f"127.0.0.1:{choices[1][3]}"
        log = (Path(info.temp_dir) / "ray-start.log").read_text()
        assert "Failed to start the grpc server" in log and log.count("Ray runtime started.") == 1
    finally:
        squatter.close()
        if info is not None and info.pid:
            stop_process_group(info.pid, grace=3.0)


def test_a_node_that_ray_gave_up_registering_is_started_again() -> None:
    # ray/_private/node.py's words when the GCS did not see the node register within 30 s; the
    # node's `ray start` then exits with its raylet (a fresh-clone run, a loaded machine).
    said = ("INFO node.py:438 -- Failed to get node info b'RPC error: Deadline Exceeded'\n"
            "Exception: The current node timed out during startup. This could happen because some of the "
            "raylet failed to startup or the GCS has become overloaded.\n")
    assert head._registration_timed_out(said)
    assert not head._registration_timed_out("Exception: Failed to start the grpc server")
