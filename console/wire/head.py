"""The kernel <-> server vocabulary of the Ray head channel: a sandboxed kernel asks, the server starts.

A sandboxed kernel lives in its own PID namespace, so a Ray head it started would die with it;
it asks its server over a socket of its own instead (console/cluster/head.py HeadLink), and the
server starts or finds the embedded head and answers with where it is. The kernel is untrusted:
the server decodes TO_SERVER on a 1 MiB line cap (console/wire/channel.py).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any, ClassVar

from console.wire.codec import Max, Message, Vocabulary

TO_SERVER = Vocabulary("kernel->server head")
TO_KERNEL = Vocabulary("server->kernel head")

_Address = Annotated[str, Max(512)]


@dataclass(frozen=True)
class ClusterInfo:
    """Where cells connect: `address` for ray.init (GCS host:port or ray://…).

    The one record of a cluster's whereabouts: the server's (console/cluster/head.py starts and
    records it), the head channel's answer to a kernel, and the kernel's answer to its cell
    worker (console/wire/worker.py ClusterFound) are this dataclass, decoded by type on each hop.
    """

    address: _Address
    client_address: _Address | None = None  # host:port of the Ray Client server, when known
    pid: int | None = None  # the `ray start --block` process (embedded only)
    started: int | None = None  # that process's start time (/proc/<pid>/stat): a reused pid is not it
    temp_dir: Annotated[str, Max(4096)] | None = None
    num_cpus: int | None = None
    embedded: bool = False
    auth_token: Annotated[str, Max(512)] | None = None  # the embedded head's (RAY_AUTH_TOKEN); only kernels get it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@TO_SERVER.register
@dataclass(frozen=True)
class HeadRequest(Message):
    """Start the embedded Ray head (or find it running) and say where it is."""

    type: ClassVar[str] = "head_request"
    request_id: Annotated[str, Max(64)]


@TO_KERNEL.register
@dataclass(frozen=True)
class HeadAnswer(Message):
    """Where the head is, or why it did not start."""

    type: ClassVar[str] = "head_answer"
    request_id: str
    info: ClusterInfo | None = None
    error: str = ""
