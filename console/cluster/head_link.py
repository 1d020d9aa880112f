"""The Ray head channel between a sandboxed kernel and its server (console/wire/head.py's vocabulary).

A sandboxed kernel lives in its own PID namespace, so a head it started would die with it: it asks
its server over a socket the server hands it (`HEAD_FD_ENV`), and the server starts or finds the
head (cluster/head.py RayCluster, or the session's own cluster) and answers with its ClusterInfo.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any, Mapping, Protocol

from console.cluster.head import RayCluster
from console.wire.channel import TRUSTED_LINE_CAP, Channel, ProtocolError, new_request_id
from console.wire.head import TO_KERNEL as HEAD_TO_KERNEL, TO_SERVER, ClusterInfo, HeadAnswer, HeadRequest

log = logging.getLogger(__name__)

HEAD_FD_ENV = "CONSOLE_RAY_HEAD_FD"


class HeadLink:
    """A sandboxed kernel's end of the socket to its server (console/wire/head.py): ask() -> ClusterInfo.

    Made once by the kernel's main (from_env) and handed to the RayCluster it builds.
    """

    TIMEOUT = 600.0  # a head (or a driver node of an external cluster) may take minutes to start

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.channel = Channel(HEAD_TO_KERNEL, read=sock.fileno(), write=sock.fileno(), answers=(HeadAnswer,),
                               line_cap=TRUSTED_LINE_CAP, name="server->kernel head")
        # Answers are handed to their requests by the channel's reader.
        threading.Thread(target=lambda: list(self.channel.messages()), name="head-link", daemon=True).start()

    @classmethod
    def from_env(cls) -> "HeadLink | None":
        """The link the server handed this kernel (HEAD_FD_ENV, taken out of the environment so
        the kernel's workers do not see it); None when it runs without one."""
        fd = os.environ.pop(HEAD_FD_ENV, "")
        if not fd.isdigit():
            return None
        try:
            return cls(socket.socket(fileno=int(fd)))
        except OSError:
            log.warning("%s=%s is not a socket; the kernel starts no Ray head", HEAD_FD_ENV, fd)
            return None

    def ask(self) -> ClusterInfo:
        try:
            answer = self.channel.request(HeadRequest(new_request_id()), HeadAnswer, self.TIMEOUT)
        except ConnectionError:
            raise RuntimeError("the server closed the Ray head channel") from None
        if answer.error or answer.info is None:
            raise RuntimeError(answer.error or "the server answered without a cluster")
        return answer.info


class OwnCluster(Protocol):
    """A session's own cluster, as the head channel uses it (cluster/session_head.py SessionCluster)."""

    def ensure(self) -> ClusterInfo: ...

    def stop(self, grace: float = 5.0) -> None: ...


def serve_head_requests(sock: socket.socket, cfg: Mapping[str, Any], own: OwnCluster | None = None) -> None:
    """The server's end of a kernel's head channel: start (or find) the head on each request.

    Runs on a thread of its own until the kernel closes its end, or breaks the protocol (a line
    over 1 MiB, anything but a head_request): then the channel is closed, and the kernel's
    cells that need Ray fail with "the server closed the Ray head channel".

    own: the session's own cluster (cluster/session_head.py), started on the first request and
    stopped when the channel ends; None: the data dir's shared head.
    """
    from console.cluster import sandbox

    channel = Channel(TO_SERVER, read=sock.fileno(), write=sock.fileno(), name="kernel->server head")
    with sock:
        try:
            for request in channel.messages():
                if not isinstance(request, HeadRequest):  # the vocabulary's only message: narrows the type
                    continue
                try:
                    if own is not None:
                        info = own.ensure()
                    else:
                        info = RayCluster(cfg).ensure(sandboxed=sandbox.enabled(cfg))
                    answer = HeadAnswer(request.request_id, info=info)
                except Exception as exc:  # the cell sees it as its own error
                    log.exception("the embedded Ray head did not start")
                    answer = HeadAnswer(request.request_id, error=f"the Ray head did not start: {exc}")
                if not channel.send(answer):
                    return
        except ProtocolError as exc:
            log.warning("a kernel broke the Ray head channel's protocol; it is closed: %s", exc)
        finally:
            if own is not None:  # the kernel is gone (or broke the protocol): so is its cluster
                own.stop()
