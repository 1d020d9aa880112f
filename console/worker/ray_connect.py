"""Joining a Ray cluster as a driver, and joining again when Ray Client lost our server.

Ray Client's proxy forks one server per client connection, and that server sometimes dies while
it starts (ray-project/ray#63202, a gRPC race at fork). The client then gets a
ConnectionAbortedError, in one of two words: the proxy's own "Starting Ray client server failed",
or its traceback from `start_specific_server` when the child died between the proxy's poll and
its psutil look (seen on CI as psutil.ZombieProcess). Or the client's channel broke while it
started and its reconnect found the proxy had already dropped the client: a ConnectionError,
"Request can't be sent … NOT_FOUND: Attempted to reconnect a session that has already been cleaned
up" (seen on CI, a Daft driver under load). A new connection gets a new client and a new server, so
a driver tries again, a few times; any other refusal (a missing token) fails at once.

Runs in: the cell worker (a Python cell's driver), the kernel's Daft driver of cluster SQL, and
the tests' own drivers, which must meet the cluster the way the product does.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

ATTEMPTS = 3
_LOST = ("Starting Ray client server failed", "start_specific_server",
         "Attempted to reconnect a session that has already been cleaned up")


def client_server_lost(error: BaseException | str) -> bool:
    """Whether a failed connection is Ray Client's lost server (worth a new try), not a refusal."""
    return any(sign in str(error) for sign in _LOST)


def init_ray(address: str, then: Callable[[], None] | None = None, **kwargs: Any) -> None:
    """`ray.init(address=…, **kwargs)`, connecting again (up to ATTEMPTS in all) when the failure
    is Ray Client's lost server; says so on stderr, where the cell's output shows it.

    then: the first requests over the new connection (Daft's runner), tried again with it: a lost
    server can show in them rather than in ray.init."""
    import ray

    for attempt in range(ATTEMPTS):
        try:
            ray.init(address=address, **kwargs)
            if then is not None:
                then()
            return
        except ConnectionError as exc:  # ConnectionAbortedError (the proxy's words) or the reconnect's
            if attempt == ATTEMPTS - 1 or not client_server_lost(exc):
                raise
            ray.shutdown()
            print("[console] the Ray Client server did not start (ray-project/ray#63202); connecting again",
                  file=sys.stderr)
