"""No 5xx from bad input: every socket command and every JSON endpoint of a real server in login mode,
fed wrong types, huge values and deep nesting (issue 21, "No 5xx in a fuzz").

Deterministic rather than random, so a failure names the request that caused it and reruns the
same: each field of each socket command gets every value of WRONG; each endpoint gets bodies that
are not objects, not JSON, nested past any limit or past the body cap, and every field name the
API reads set to a few wrong values each; GET endpoints get the query parameters the API reads set
to garbage. The URL's own parts are real ids (the caller owns the notebook), so the handlers run.
"""
from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from flask import Flask

from console.wire.browser import COMMANDS
from findings_support import Client
from security_support import Served, socket_as

WRONG: list[Any] = [None, True, False, 0, -1, 2**63, 2**80, 1.5, 1e308, "", "x", "\ud800", "../../etc/passwd",
                    "a" * 70_000, [], [1, "a", None], {}, {"a": {"b": [1]}}, [[[[[[[[[[[]]]]]]]]]]]]
# Every name a handler reads from a JSON body (console/server's typed bodies, body_as, and json_body's readers).
BODY_NAMES = ("all", "base_revision", "cell_id", "cells", "cron", "cursor", "enabled", "every_minutes", "folder",
              "from", "kind", "label", "name", "new_password", "old_password", "new_path", "next", "notebook_id",
              "notify_success", "overlap", "params", "path", "position", "retries", "role", "source",
              "timeout_seconds", "timezone", "user", "username", "password", "view", "webhook_url", "recursive",
              "format", "version", "id")
QUERY_NAMES = ("offset", "limit", "sort", "base_revision", "folder", "path", "format", "name", "a", "b", "from",
               "to", "recursive", "cursor", "kind", "source", "since", "cron", "timezone")
QUERY_VALUES = ("x", "-1", "99999999999999999999999", "%00", "[", '{"a":1}', "..%2F..", "1e999")
NOT_OBJECTS = (b"[]", b'"x"', b"1", b"null", b"true", b"{", b"NaN", b"\xff\xfe\x00", b'{"a": NaN}',
               b'{"a": 1, "a": [}', b"[" * 100_000, b'{"a":' * 70 + b"1" + b"}" * 70)
# Endpoints a fuzz must not send: logging the caller out would turn the rest into 401s.
SKIP = {"/api/logout"}


def _ack_ok(ack: Any) -> bool:
    return isinstance(ack, dict) and isinstance(ack.get("ok"), bool) and (
        ack["ok"] or (isinstance(ack.get("status"), int) and 400 <= ack["status"] < 500))


@pytest.mark.slow  # ~30 s: some 600 commands (tests/live/test_coedit_trust.py has the quick decoder check)
@pytest.mark.timeout(600)
def test_no_socket_command_answers_5xx(mu_app: Flask, served: Served) -> None:
    alice = Client(served.url).login("alice")
    nb = alice.notebook("fuzz", "select 1 as a as t;")
    sio = socket_as(served.url, "alice")
    bad: list[tuple[Any, Any]] = []

    def send(command: Any) -> None:
        ack = sio.call("command", command, timeout=60)
        if not _ack_ok(ack):
            bad.append((repr(command)[:200], ack))

    try:
        assert sio.call("command", {"type": "join", "notebook_id": nb["id"]}, timeout=30)["ok"]
        raws: list[Any] = [None, [], "join", 1, {"type": None}, {"type": ["join"]}, {"type": "output", "text": "x"},
                           {"type": "x" * 70_000}, {"notebook_id": nb["id"]}]
        for raw in raws:
            send(raw)
        for kind, cls in sorted(COMMANDS.types.items()):
            fields = [f for f in cls.__dataclass_fields__ if f != "type"]
            valid = {f: nb["id"] if f == "notebook_id" else nb["cells"][0]["id"] if f == "cell_id" else ""
                     for f in fields}
            send({"type": kind})  # every field missing
            send({"type": kind, **valid, "unknown": 1})
            for name in fields:
                for value in WRONG:
                    send({"type": kind, **valid, name: value})
        assert bad == [], bad[:10]
        assert sio.call("command", {"type": "leave", "notebook_id": nb["id"]}, timeout=30)["ok"]
    finally:
        sio.disconnect()


def _urls(mu_app: Flask, ids: dict[str, str]) -> list[tuple[str, str]]:
    """(method, path) of every API endpoint, its URL parts filled with the caller's real ids."""
    out = []
    for rule in mu_app.url_map.iter_rules():
        if not rule.rule.startswith("/api/") or rule.rule in SKIP:
            continue
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", lambda m: ids.get(m.group(1), "1"), rule.rule)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            out.append((method, path))
    # A DELETE last: it may take the notebook the other requests aim at.
    return sorted(set(out), key=lambda mp: (mp[0] == "DELETE", mp[1], mp[0]))


@pytest.mark.slow  # ~40 s: some 8,000 requests
@pytest.mark.timeout(900)
def test_no_json_endpoint_answers_5xx(mu_app: Flask, served: Served) -> None:
    alice = Client(served.url).login("alice")
    nb = alice.notebook("fuzz", "select 1 as a as t;", "select 2 as b as u;")
    view = alice.run(nb, 0)
    link = alice.call("POST", f"/api/notebooks/{nb['id']}/links").json
    share = alice.call("POST", f"/api/notebooks/{nb['id']}/shares", {"user": "vera", "role": "viewer"}).json
    ids = {"notebook_id": nb["id"], "cell_id": nb["cells"][1]["id"], "token": link["token"],
           "run_id": view["id"], "share_id": str(share["id"]), "number": "1", "fmt": "csv", "job_id": "nojob"}
    bad: list[tuple[str, str, str, int, str]] = []

    def check(method: str, path: str, what: str, **kw: Any) -> None:
        reply = alice.call(method, path, **kw)
        if reply.status >= 500:
            bad.append((method, path, what[:120], reply.status, reply.text[:200]))

    values = itertools.cycle(WRONG)
    for method, path in _urls(mu_app, ids):
        if method == "GET":
            check(method, path, "plain")
            for name in QUERY_NAMES:
                for value in QUERY_VALUES[:3] if name not in ("sort", "offset", "limit") else QUERY_VALUES:
                    check(method, f"{path}?{name}={value}", f"{name}={value}")
            continue
        for raw in NOT_OBJECTS:
            check(method, path, repr(raw[:40]), raw=raw)
        for name in BODY_NAMES:
            for _ in range(3):
                value = next(values)
                check(method, path, f"{name}={value!r}"[:120], body={name: value})
        check(method, path, "every name, long text", body={name: "z" * 20_000 for name in BODY_NAMES})
    # Past the body cap, and the same chunked (no length to check up front): 413, not 500.
    huge = b'{"name": "' + b"a" * (mu_app.config["MAX_CONTENT_LENGTH"] + 10) + b'"}'
    check("POST", "/api/notebooks", "huge", raw=huge)
    check("POST", "/api/notebooks", "huge chunked", raw=iter([huge[:1 << 20], huge[1 << 20:]]))
    anonymous = Client(served.url)
    for value in WRONG:
        reply = anonymous.call("POST", "/api/login", {"username": value, "password": value})
        if reply.status >= 500:
            bad.append(("POST", "/api/login", repr(value)[:120], reply.status, reply.text[:200]))
    assert bad == [], "\n".join(map(str, bad[:20]))
    assert alice.call("GET", "/api/health").status == 200
    assert json.loads(alice.call("GET", "/api/me").body)["user"]["username"] == "alice"
