"""A job's webhook: one POST of JSON, sent only to the public address it names.

The POST comes from the server, so a member's webhook could otherwise reach what only the server
can: its own API on loopback, the Ray dashboard (which accepts job submissions), a cloud metadata
service at 169.254.169.254, the internal network. Unless CONSOLE_WEBHOOK_PRIVATE allows them, an
address that is loopback, private, link-local or otherwise not global is refused: a literal one
when the job is saved (`private_literal`), a name when the webhook is sent, by every address the
name resolves to. The connection then goes to the address that was checked (a name that resolves
differently a moment later cannot slip past), and redirects are not followed, since a public
receiver could redirect to an internal one.
"""
from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
from typing import Any
from urllib.parse import urlsplit

USER_AGENT = "mlsql-console-jobs"


# How the resolver reads a host that is all digits, dots and hex: inet_aton's forms (2130706433,
# 0x7f000001, 127.1, 0177.0.0.1 are all 127.0.0.1), which ipaddress alone does not take.
_NUMERIC_V4 = re.compile(r"[0-9a-fA-FxX.]+")
# IPv6 forms that carry an IPv4 address the packet ends up at (mapped, SIIT, IPv4-compatible,
# NAT64 and its local-use prefix, 6to4): Python calls most of them global whatever they embed.
_EMBEDDING = [ipaddress.ip_network(n) for n in ("::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96",
                                                 "64:ff9b:1::/48")]
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host names outright, read as the OS resolver reads it; None for a name."""
    host = text.strip("[]").split("%", 1)[0].rstrip(".")
    addr: ipaddress.IPv4Address | ipaddress.IPv6Address
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        if not host or not _NUMERIC_V4.fullmatch(host):
            return None
        try:
            addr = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.sixtofour is not None:
            return addr.sixtofour
        if any(addr in net for net in _EMBEDDING) and int(addr) > 1:  # not :: or ::1 themselves
            return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    return addr


def not_public(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return not addr.is_global or addr.is_multicast


def _loopback_name(host: str) -> bool:
    """localhost in any spelling (LOCALHOST., x.localhost: RFC 6761 keeps them on this machine)."""
    name = host.lower().rstrip(".")
    return name in _LOOPBACK_NAMES or name.endswith(".localhost")


def private_literal(url: str) -> str | None:
    """Why a URL naming a non-public address outright (or localhost) is refused (None: it does not)."""
    host = urlsplit(url).hostname or ""
    addr = _address(host)
    if _loopback_name(host) or (addr is not None and not_public(addr)):
        shown = f"{host} ({addr})" if addr is not None and str(addr) != host.strip("[]") else host
        return (f"the webhook's address {shown} is not a public one (loopback, private or link-local): the "
                f"server would call into its own network; CONSOLE_WEBHOOK_PRIVATE allows it")
    return None


MAX_URL = 2048


def malformed(url: str) -> str | None:
    """Why `url` is no webhook address (None when it is one): http(s), a host, a port that is a number."""
    why = "'webhook_url' must be an http:// or https:// URL with a host (at most 2048 characters)"
    if len(url) > MAX_URL or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return why + ", without spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError for a port that is not a number from 0 to 65535
    except ValueError as exc:
        return f"{why}: {exc}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return why
    if port == 0:
        return f"{why}: port 0 is no port"
    return None


class _Pinned(http.client.HTTPConnection):
    """HTTP to the address already checked, whatever the name resolves to by now."""

    def __init__(self, host: str, port: int | None, ip: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.ip = ip

    def connect(self) -> None:
        self.sock = socket.create_connection((self.ip, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    """HTTPS to the address already checked; the certificate is still checked against the name."""

    def __init__(self, host: str, port: int | None, ip: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.ip = ip

    def connect(self) -> None:
        sock = socket.create_connection((self.ip, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


class Refused(Exception):
    """Not sent: the URL's name resolves to an address the server may not call."""


def _resolve(host: str, port: int, allow_private: bool) -> str:
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    ips = [str(info[4][0]) for info in infos]
    for ip in ips:
        addr = _address(ip)
        if not allow_private and (addr is None or not_public(addr)):
            raise Refused(f"not sent: {host} resolves to {ip}, not a public address (loopback, private or "
                          f"link-local); CONSOLE_WEBHOOK_PRIVATE allows it")
    return ips[0]


def post(url: str, body: bytes, *, allow_private: bool, timeout: float) -> int:
    """POST the JSON body; the HTTP status. Raises Refused, or OSError when nothing answered."""
    why = malformed(url)  # a URL stored before jobs.py checked it this way: refused, not a crash of the run
    if why:
        raise Refused(f"not sent: {why}")
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    host = parts.hostname or ""
    ip = _resolve(host, port, allow_private)
    conn = (_PinnedTLS if tls else _Pinned)(host, port, ip, timeout)
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers: dict[str, Any] = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read(64 * 1024)
        return resp.status
    except http.client.HTTPException as exc:
        raise OSError(f"{type(exc).__name__}: {exc}") from exc
    finally:
        conn.close()
