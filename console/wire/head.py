"""The kernel <-> server vocabulary of the Ray head channel: a sandboxed kernel asks, the server starts.

A sandboxed kernel lives in its own PID namespace, so a Ray head it started would die with it;
it asks its server over a socket of its own instead (console/cluster/head.py HeadLink), and the
server starts or finds the embedded head and answers with where it is. The kernel is untrusted:
the server decodes TO_SERVER on a 1 MiB line cap (console/wire/channel.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from console.wire.codec import Max, Message, Vocabulary

TO_SERVER = Vocabulary("kernel->server head")
TO_KERNEL = Vocabulary("server->kernel head")


@TO_SERVER.register
@dataclass(frozen=True)
class HeadRequest(Message):
    """Start the embedded Ray head (or find it running) and say where it is."""

    type: ClassVar[str] = "head_request"
    request_id: Annotated[str, Max(64)]


@TO_KERNEL.register
@dataclass(frozen=True)
class HeadAnswer(Message):
    """Where the head is (console/cluster/head.py ClusterInfo as a dict), or why it did not start."""

    type: ClassVar[str] = "head_answer"
    request_id: str
    info: dict[str, Any] = field(default_factory=dict)
    error: str = ""
