"""What the embedded Ray head starts with: ports it can start on, and the token that closes it.

Ports: Ray's workers listen in WORKER_PORTS; a Ray Client port inside that range, or two of the
head's ports equal, would keep the head from starting with an unclear error, so they are refused
first, with the reason (at the server's start for CONSOLE_RAY_CLIENT_PORT, at the head's for the
rest).

Token: the embedded head runs with Ray's token authentication (RAY_AUTH_MODE=token). The token is
made once and kept owner-only in the private folder, which no sandbox sees; the server hands it
to the head and to kernels (ClusterInfo.auth_token, and the kernel's environment), and to nobody
else. Ray 2.60 checks it on the GCS, the raylet and the Ray Client server, and its ray:// client
sends it (RAY_AUTH_MODE=token, RAY_AUTH_TOKEN in the client's environment).

Runs in: the server, and whatever starts an embedded head (a headless run, the tests' fixture).
"""
from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Ray's workers listen in this range (the embedded head's); no other port of the head may be in it.
WORKER_PORTS = (10002, 19999)
_TOKEN_FILE = "ray-auth-token"


class BadPorts(ValueError):
    """Two of the head's ports are one, or one lies in the workers' range: Ray would not start."""


def check_ports(client_port: int | None, others: Mapping[str, int] = {}) -> None:
    """Refuse, with the reason, ports the head cannot start with (before it fails unclearly)."""
    low, high = WORKER_PORTS
    named = {**({"the Ray Client port (CONSOLE_RAY_CLIENT_PORT)": client_port} if client_port else {}),
             **others}
    for what, port in named.items():
        if low <= port <= high:
            raise BadPorts(f"{what} is {port}, inside the range Ray's workers listen on ({low}-{high}); "
                           f"choose a port outside it")
    seen: dict[int, str] = {}
    for what, port in named.items():
        if port in seen:
            raise BadPorts(f"{what} and {seen[port]} are both {port}; every Ray port must differ")
        seen[port] = what


def auth_token(private_dir: Path) -> str:
    """The embedded head's token: made once, kept owner-only in the private folder (sandboxes never see it)."""
    path = private_dir / _TOKEN_FILE
    try:
        token = path.read_text().strip()
        if token:
            return token
    except FileNotFoundError:
        pass
    private_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path.with_suffix(f".{os.getpid()}.tmp"), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32))
    path.with_suffix(f".{os.getpid()}.tmp").replace(path)
    return path.read_text().strip()


def external_token(cfg: Mapping[str, Any]) -> str | None:
    """The token of the existing cluster CONSOLE_RAY_ADDRESS names (CONSOLE_RAY_AUTH_TOKEN_FILE), if it has one."""
    path = cfg.get("RAY_AUTH_TOKEN_FILE")
    if not path or not cfg.get("RAY_ADDRESS"):
        return None
    try:
        token = Path(path).read_text().strip()
    except OSError as exc:
        raise RuntimeError(f"CONSOLE_RAY_AUTH_TOKEN_FILE: cannot read {path} ({exc.strerror})") from None
    if not token:
        raise RuntimeError(f"CONSOLE_RAY_AUTH_TOKEN_FILE: {path} is empty")
    return token


def token_env(token: str | None) -> dict[str, str]:
    """What a Ray process needs in its environment to reach a head with this token (none: nothing)."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token} if token else {}


__all__ = ["BadPorts", "WORKER_PORTS", "auth_token", "check_ports", "external_token", "token_env"]
