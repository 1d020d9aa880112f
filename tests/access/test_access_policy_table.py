"""The one policy table: an endpoint or socket command without a row is refused, every row is a
policy the enforcer knows, and the roles the page gets are the one list of console/roles.py."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from console import roles
from console.server.access import (
    POLICIES, POLICIES_KEY, classify, command_key, command_types, init_access, parse_policy, valid_policy,
)
from console.server.live.sockets import init_sockets
from console.wire.codec import message_types

from authz_world import SOCKET_SPEC, build_world
from security_support import login

SECURITY_DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def _socket(app: Flask, name: str) -> Any:
    client = login(app, name)
    sock = app.extensions["socketio"].test_client(app, flask_test_client=client, auth={"csrf": client.csrf_token})
    assert sock.is_connected()
    return sock


def _full(cls: type, notebook_id: str) -> dict[str, Any]:
    """A well-formed wire dict of message class `cls` (every required field filled)."""
    data: dict[str, Any] = {"type": cls.type}  # type: ignore[attr-defined]
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        kind = str(f.type)
        data[f.name] = (notebook_id if f.name == "notebook_id" else 0 if kind.startswith("int")
                        else 0.0 if kind.startswith("float") else {} if kind.startswith("dict")
                        else [] if kind.startswith("list") else "x")
    return data


def test_every_row_is_a_policy_the_enforcer_knows() -> None:
    bad = {key: policy for key, policy in POLICIES.items() if not valid_policy(policy)}
    assert not bad
    for policy in ("notebook:admin", "login", "notebook:viewer", "root login", "member notebook:god",
                   "reader notebook:runner", "reader run:editor", "member nothing"):
        with pytest.raises(ValueError):
            classify(Flask("x"), "x", policy)
    assert parse_policy("member notebook:runner") == ("member", "notebook", "runner")
    assert parse_policy("public") == (None, "public", None)


def test_every_row_states_its_site_role_and_whatever_runs_or_makes_notebooks_needs_a_member() -> None:
    """Readers may not execute through any path: every row that can start, stop or restart code, or
    that makes a notebook the caller would own, needs a member."""
    sites = {key: parse_policy(policy).site for key, policy in POLICIES.items()}
    assert all(site is not None for key, site in sites.items() if POLICIES[key] != "public")
    must_be_member = {"runs.run", "runs.interrupt", "runs.restart", "api.notebooks.create", "api.transfer.import",
                      "api.notebooks.duplicate", "api.notebooks.fork", "api.folders.create",
                      *(command_key(c) for c in ("run_cell", "run_all", "run_from", "interrupt", "restart"))}
    assert {key for key in must_be_member if sites[key] != "member"} == set()
    # Whatever needs more than viewing a notebook also says member, so the table reads true.
    above_viewer = {key for key, policy in POLICIES.items()
                    if parse_policy(policy).role not in (None, "viewer")}
    assert above_viewer and all(sites[key] == "member" for key in above_viewer)


def test_a_row_the_enforcer_cannot_read_stops_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(POLICIES, "api.health", "notebook:viewer")  # an old-style row, no site role
    with pytest.raises(RuntimeError, match="api.health"):
        init_access(Flask("x"))


def test_an_endpoint_without_a_row_is_refused_even_for_the_owner(mu_app: Flask) -> None:
    @mu_app.route("/api/unclassified")
    def unclassified() -> str:
        return "reached"

    alice = login(mu_app, "alice")
    r = alice.get("/api/unclassified")
    assert r.status_code == 403 and "no access policy" in r.json["error"]
    classify(mu_app, "unclassified", "reader login")
    assert alice.get("/api/unclassified").get_data(as_text=True) == "reached"


def test_a_command_without_a_row_is_refused_before_its_handler(mu_app: Flask) -> None:
    w = build_world(mu_app.extensions["store"])
    del mu_app.extensions[POLICIES_KEY][command_key("restart")]
    sock = _socket(mu_app, "alice")  # the notebook's owner
    ack = sock.emit("command", {"type": "restart", "notebook_id": w.nb}, callback=True)
    assert ack["ok"] is False and ack["status"] == 403 and "no access policy" in ack["error"], ack
    assert sock.emit("command", {"type": "leave", "notebook_id": w.nb}, callback=True)["ok"]


def test_messages_that_are_not_commands_are_refused(mu_app: Flask) -> None:
    """Every message type of every channel without a socket row (events, the kernel's execute) is
    refused even for the owner, by the browser vocabulary's decoder before the policy table, and a
    type nobody knows is refused too."""
    w = build_world(mu_app.extensions["store"])
    sock = _socket(mu_app, "alice")
    others = {name: cls for name, cls in message_types().items() if name not in command_types(mu_app)}
    assert "execute" in others and "output" in others
    for name, cls in others.items():
        ack = sock.emit("command", _full(cls, w.nb), callback=True)
        assert ack["ok"] is False and ack["status"] == 400 and "unknown message type" in ack["error"], (name, ack)
    ack = sock.emit("command", {"type": "launch_missiles", "notebook_id": w.nb}, callback=True)
    assert ack["ok"] is False and ack["status"] == 400 and "unknown message type" in ack["error"], ack
    assert not mu_app.extensions["store"].list_runs(w.nb)[1:]  # only the world's own stored run


def test_commands_and_their_rows_must_match_or_the_app_does_not_start(mu_app: Flask) -> None:
    assert command_types(mu_app) == set(SOCKET_SPEC)
    classify(mu_app, command_key("self_destruct"), "member notebook:owner")
    with pytest.raises(RuntimeError, match="self_destruct"):
        init_sockets(mu_app)


def test_the_page_gets_the_roles_from_the_one_list(mu_app: Flask) -> None:
    served = [{"name": role, "can": roles.ROLE_CAN[role]} for role in roles.ROLES]
    sites = [{"name": role, "can": roles.SITE_ROLE_CAN[role], "cap": roles.SITE_CAP[role]} for role in roles.SITE_ROLES]
    for client in (mu_app.test_client(), login(mu_app, "vera")):  # auth.me is public: the login page reads it too
        me = client.get("/api/me").json
        assert me["roles"] == served and me["site_roles"] == sites
    assert login(mu_app, "rita").get("/api/me").json["user"]["site_role"] == "reader"
    # docs/security.md's tables of roles name them in the same order.
    doc = SECURITY_DOC.read_text(encoding="utf-8")
    table = doc.split("## Roles", 1)[1].split("\n\n", 2)[1]
    assert re.findall(r"^\| (\w+) \|", table, re.M)[1:] == list(roles.ROLES)
    table = doc.split("## Site roles", 1)[1].split("\n\n", 3)[2]
    assert re.findall(r"^\| (\w+) \|", table, re.M) == list(roles.SITE_ROLES)  # the header is two words
