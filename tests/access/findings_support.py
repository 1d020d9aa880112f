"""An HTTP client of a real server for the attack test's findings: raw bodies (chunked too), no
redirects followed, the login's cookies and CSRF token kept, and a run waited for by polling."""
from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from security_support import PASSWORD


class Reply:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.text[:300]!r})"


class Client:
    """One browser's worth of HTTP to `url`: cookies from the login, its CSRF token on every call."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.cookies: dict[str, str] = {}
        self.csrf = ""

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | Iterable[bytes] | None = None,
             headers: dict[str, str] | None = None, timeout: float = 60) -> Reply:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        sent = {"Accept": "application/json", **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if self.csrf:
            sent["X-CSRF-Token"] = self.csrf
        data: Any = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        chunked = data is not None and not isinstance(data, (bytes, bytearray))
        try:
            conn.request(method, path, body=data, headers=sent, encode_chunked=chunked)
            resp = conn.getresponse()
            reply = Reply(resp.status, resp.headers, resp.read())
        finally:
            conn.close()
        for header in reply.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name] = rest.split(";", 1)[0]
        return reply

    def login(self, name: str, password: str = PASSWORD) -> "Client":
        r = self.call("POST", "/api/login", {"username": name, "password": password})
        assert r.status == 200, r
        self.csrf = r.json["csrf_token"]
        return self

    def notebook(self, name: str, *sources: str | tuple[str, str], folder: str = "/") -> dict[str, Any]:
        cells = [{"kind": "mlsql", "source": s} if isinstance(s, str) else {"kind": s[0], "source": s[1]}
                 for s in sources]
        r = self.call("POST", "/api/notebooks", {"name": name, "folder": folder, "cells": cells})
        assert r.status == 201, r
        return r.json  # type: ignore[no-any-return]

    def run(self, nb: dict[str, Any], index: int = 0, timeout: float = 120) -> dict[str, Any]:
        """Run one cell and wait until it ends; the stored run with its events."""
        r = self.call("POST", f"/api/notebooks/{nb['id']}/run", {"cell_id": nb["cells"][index]["id"]})
        assert r.status == 202, r
        run_id = r.json["run_ids"][0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            view = self.call("GET", f"/api/runs/{run_id}").json
            if view["status"] not in ("queued", "running"):
                return view  # type: ignore[no-any-return]
            time.sleep(0.05)
        raise AssertionError(f"run {run_id} did not end in {timeout} s")


def error_of(view: dict[str, Any]) -> dict[str, Any] | None:
    return next((e for e in view["events"] if e["type"] == "error"), None)


def result_of(view: dict[str, Any]) -> dict[str, Any] | None:
    return next((e for e in view["events"] if e["type"] == "result"), None)
