"""Comments on cells over the API (console/server/api/comments.py), logged in for real: who may
comment, reply, resolve, edit and delete; hostile bodies; a deleted cell's threads; and the live
`comments_changed` event a viewer's socket on a real server on 127.0.0.1 gets."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from security_support import login, socket_as


def _notebook(app: Flask) -> tuple[FlaskClient, str, list[str]]:
    """alice's notebook of two cells, vera a viewer, eddie an editor, rita (a reader) a viewer."""
    alice = login(app, "alice")
    r = alice.post("/api/notebooks", json={"name": "reviewed", "cells": [
        {"kind": "mlsql", "source": "select 1 as a;"}, {"kind": "python", "source": "print(1)"}]})
    assert r.status_code == 201, r.json
    nb = r.json["id"]
    for user, role in (("vera", "viewer"), ("eddie", "editor"), ("rita", "viewer")):
        assert alice.post(f"/api/notebooks/{nb}/shares", json={"user": user, "role": role}).status_code == 201
    return alice, nb, [c["id"] for c in r.json["cells"]]


def _threads(client: FlaskClient, nb: str) -> list[dict[str, Any]]:
    r = client.get(f"/api/notebooks/{nb}/comments")
    assert r.status_code == 200, r.json
    return list(r.json["threads"])


def test_viewers_comment_and_resolve_and_only_the_author_edits_or_deletes(mu_app: Flask) -> None:
    alice, nb, (c0, c1) = _notebook(mu_app)
    vera, eddie, rita, mallory = (login(mu_app, n) for n in ("vera", "eddie", "rita", "mallory"))
    url = f"/api/notebooks/{nb}/comments"

    # A stranger learns nothing (404, as for a notebook that does not exist); nobody logged in: 401.
    assert mallory.get(url).status_code == 404
    assert mallory.post(url, json={"cell_id": c0, "text": "hi"}).status_code == 404
    assert mu_app.test_client().get(url).status_code == 401

    r = alice.post(url, json={"cell_id": c0, "text": "why select 1?",
                              "anchor": {"start": 0, "end": 6, "quote": "select"}})
    assert r.status_code == 201, r.json
    thread = r.json
    assert thread["anchor"] == {"start": 0, "end": 6, "quote": "select"}
    assert thread["mine"] and thread["author"] == "alice"
    # A viewer replies; a reader with a viewer share comments too (a comment is no edit of the notebook).
    r = vera.post(url, json={"thread_id": thread["id"], "text": "a smoke test"})
    assert r.status_code == 201 and r.json["cell_id"] == c0, r.json
    reply = r.json
    r = rita.post(url, json={"cell_id": c1, "text": "a reader's note"})
    assert r.status_code == 201, r.json
    assert mallory.patch(f"{url}/{thread['id']}", json={"resolved": True}).status_code == 404

    # Only the author changes the text or deletes; anyone who may comment resolves and reopens.
    for other in (vera, eddie):
        r = other.patch(f"{url}/{thread['id']}", json={"text": "rewritten"})
        assert r.status_code == 403 and "author" in r.json["error"], r.json
        assert other.delete(f"{url}/{thread['id']}").status_code == 403
    assert alice.patch(f"{url}/{reply['id']}", json={"text": "not mine"}).status_code == 403
    r = vera.patch(f"{url}/{thread['id']}", json={"resolved": True})
    assert r.status_code == 200 and r.json["resolved"] and r.json["resolved_by_name"] == "vera", r.json
    r = vera.patch(f"{url}/{reply['id']}", json={"resolved": True})  # a reply is resolved with its thread
    assert r.status_code == 400 and "thread" in r.json["error"], r.json
    r = eddie.patch(f"{url}/{thread['id']}", json={"resolved": False})
    assert r.status_code == 200 and not r.json["resolved"]
    r = vera.patch(f"{url}/{reply['id']}", json={"text": "a smoke test, nothing more"})
    assert r.status_code == 200 and r.json["edited_at"], r.json

    (first, second) = _threads(vera, nb)
    assert first["id"] == thread["id"] and not first["mine"] and not first["cell_deleted"]
    replies = [(c["text"], c["author"], c["mine"]) for c in first["replies"]]
    assert replies == [("a smoke test, nothing more", "vera", True)]
    assert second["author"] == "rita" and second["replies"] == []

    # The author deletes: a first comment with replies stays as deleted, and the reply with it.
    assert alice.delete(f"{url}/{thread['id']}").status_code == 204
    (first, _) = _threads(alice, nb)
    assert first["deleted"] and first["text"] == "" and not first["mine"] and len(first["replies"]) == 1
    assert alice.patch(f"{url}/{thread['id']}", json={"text": "back"}).status_code == 403
    assert vera.delete(f"{url}/{reply['id']}").status_code == 204
    assert [t["author"] for t in _threads(alice, nb)] == ["rita"]
    assert alice.delete(f"{url}/nosuchcomment").status_code == 404


def test_a_comment_id_of_another_notebook_is_not_found(mu_app: Flask) -> None:
    alice, nb, (c0, _) = _notebook(mu_app)
    mallory = login(mu_app, "mallory")
    r = mallory.post("/api/notebooks", json={"name": "mine", "cells": [{"kind": "mlsql", "source": "select 2;"}]})
    own, own_cell = r.json["id"], r.json["cells"][0]["id"]
    theirs = alice.post(f"/api/notebooks/{nb}/comments", json={"cell_id": c0, "text": "private"}).json["id"]
    # mallory owns a notebook: naming alice's comment under it reaches nothing of alice's.
    assert mallory.get(f"/api/notebooks/{own}/comments").json == {"threads": []}
    assert mallory.patch(f"/api/notebooks/{own}/comments/{theirs}", json={"resolved": True}).status_code == 404
    assert mallory.delete(f"/api/notebooks/{own}/comments/{theirs}").status_code == 404
    r = mallory.post(f"/api/notebooks/{own}/comments", json={"thread_id": theirs, "text": "hijack"})
    assert r.status_code == 404, r.json
    r = mallory.post(f"/api/notebooks/{own}/comments", json={"cell_id": c0, "text": "a cell of alice's"})
    assert r.status_code == 404, r.json  # a cell id of another notebook is no cell here
    assert mallory.post(f"/api/notebooks/{own}/comments", json={"cell_id": own_cell, "text": "ok"}).status_code == 201
    assert _threads(alice, nb)[0]["text"] == "private" and not _threads(alice, nb)[0]["resolved"]


def test_hostile_bodies_are_400s_naming_the_field(mu_app: Flask) -> None:
    alice, nb, (c0, _) = _notebook(mu_app)
    url = f"/api/notebooks/{nb}/comments"
    thread = alice.post(url, json={"cell_id": c0, "text": "ok"}).json["id"]
    cases: list[tuple[str, str, Any, str]] = [
        ("POST", url, {"cell_id": c0, "text": "x" * 10_001}, "'text' is at most 10000"),
        ("POST", url, {"cell_id": c0, "text": 5}, "'text' must be a string"),
        ("POST", url, {"cell_id": c0, "text": ["a"]}, "'text' must be a string"),
        ("POST", url, {"cell_id": c0, "text": "   "}, "'text' must not be blank"),
        ("POST", url, {"cell_id": c0}, "'text' is required"),
        ("POST", url, {"cell_id": c0, "text": "nul\x00"}, "NUL"),
        ("POST", url, {"cell_id": c0, "text": "x", "author_id": 1},
         "unknown field author_id; this body takes text, cell_id, thread_id, anchor"),
        ("POST", url, {"cell_id": 7, "text": "x"}, "'cell_id' must be a string"),
        ("POST", url, {"cell_id": "../etc", "text": "x"}, "'cell_id' is not an id"),
        ("POST", url, {"text": "x"}, "'cell_id'"),
        ("POST", url, {"cell_id": c0, "thread_id": thread, "text": "x"}, "not both"),
        ("POST", url, {"cell_id": c0, "text": "x", "anchor": "0-6"}, "'anchor' must be an object"),
        ("POST", url, {"cell_id": c0, "text": "x", "anchor": {"start": "0", "end": 6}},
         "'anchor.start' must be an integer"),
        ("POST", url, {"cell_id": c0, "text": "x", "anchor": {"start": 0}}, "'anchor.end' is required"),
        ("POST", url, {"cell_id": c0, "text": "x", "anchor": {"start": 6, "end": 2}}, "start <= end"),
        ("POST", url, {"cell_id": c0, "text": "x", "anchor": {"start": 0, "end": 1, "quote": "q" * 2001}},
         "'anchor.quote' is at most"),
        ("POST", url, {"cell_id": c0, "text": "x", "anchor": {"start": 0, "end": 1, "color": "red"}},
         "unknown field anchor.color; anchor takes start, end, quote"),
        ("POST", url, {"thread_id": thread, "text": "x", "anchor": {"start": 0, "end": 1}},
         "'anchor' is for a new thread"),
        ("POST", url, [1, 2], "JSON object"),
        ("PATCH", f"{url}/{thread}", {}, "give 'text' and/or 'resolved'"),
        ("PATCH", f"{url}/{thread}", {"resolved": "yes"}, "'resolved' must be true or false"),
        ("PATCH", f"{url}/{thread}", {"resolved": 1}, "'resolved' must be true or false"),
        ("PATCH", f"{url}/{thread}", {"text": "x" * 10_001}, "'text' is at most"),
        ("PATCH", f"{url}/{thread}", {"cell_id": c0}, "unknown field cell_id; this body takes text, resolved"),
    ]
    for method, target, body, says in cases:
        r = alice.open(target, method=method, json=body)
        shown = list(body) if isinstance(body, dict) and len(str(body)) > 200 else body
        assert r.status_code == 400 and says in r.json["error"], (shown, r.json)
    # A script is text like any other: kept verbatim (the page shows it as text, never as HTML).
    script = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    r = alice.post(url, json={"cell_id": c0, "text": script})
    assert r.status_code == 201 and r.json["text"] == script
    big = "y" * 10_000  # exactly the cap is fine
    assert alice.post(url, json={"thread_id": thread, "text": big}).status_code == 201
    assert [len(t["text"]) for t in _threads(alice, nb)] == [2, len(script)]


def test_a_hostile_anchor_is_a_400_with_its_path(mu_app: Flask) -> None:
    """A new thread's anchor is a typed body of its own (AnchorBody, decoded by body_as with the
    comment): a wrong type, a null inside, an unknown field or a value out of range names `anchor.…`."""
    alice, nb, (c0, _) = _notebook(mu_app)
    url = f"/api/notebooks/{nb}/comments"
    cases: list[tuple[Any, str]] = [
        ({"start": 0, "end": "6"}, "'anchor.end' must be an integer"),
        ({"start": 0.5, "end": 6}, "'anchor.start' must be an integer"),
        ({"start": True, "end": 6}, "'anchor.start' must be an integer"),
        ({"start": 0, "end": 6, "quote": 7}, "'anchor.quote' must be a string"),
        ({"start": 0, "end": 6, "quote": ["select"]}, "'anchor.quote' must be a string"),
        ({"start": None, "end": 6}, "'anchor.start' is required"),
        ({"start": -1, "end": 6}, "'anchor.start' must be 0 to 2147483648"),
        ({"start": 0, "end": 6, "quote": "a\x00b"}, "'anchor.quote' holds a NUL character"),
        ({"start": 0, "end": 6, "author_id": 1}, "unknown field anchor.author_id; anchor takes start, end, quote"),
        ([0, 6], "'anchor' must be an object {start, end, quote}"),
        ({"start": 0, "end": {"start": 0}}, "'anchor.end' must be an integer"),
    ]
    for anchor, says in cases:
        r = alice.post(url, json={"cell_id": c0, "text": "x", "anchor": anchor})
        assert r.status_code == 400 and r.json["error"].startswith(says), (anchor, r.json)
    assert _threads(alice, nb) == []  # nothing was written
    r = alice.post(url, json={"cell_id": c0, "text": "x", "anchor": {"start": 0, "end": 6}})
    assert r.status_code == 201 and r.json["anchor"] == {"start": 0, "end": 6, "quote": ""}, r.json


def test_a_deleted_cells_threads_stay_and_come_back_with_it(mu_app: Flask) -> None:
    alice, nb, (c0, c1) = _notebook(mu_app)
    url = f"/api/notebooks/{nb}/comments"
    assert alice.post(url, json={"cell_id": c1, "text": "on the python cell"}).status_code == 201
    rev = alice.get(f"/api/notebooks/{nb}").json["revision"]
    r = alice.patch(f"/api/notebooks/{nb}/cells/{c1}", json={"base_revision": rev, "source": "print(2)"})
    assert r.status_code == 200, r.json
    assert [(t["cell_id"], t["cell_deleted"]) for t in _threads(alice, nb)] == [(c1, False)]
    r = alice.delete(f"/api/notebooks/{nb}/cells/{c1}?base_revision={r.json['revision']}")
    assert r.status_code == 200, r.json
    assert [(t["cell_id"], t["cell_deleted"]) for t in _threads(alice, nb)] == [(c1, True)]
    # A new thread needs a cell the notebook has; a reply on a deleted cell's thread is fine.
    assert alice.post(url, json={"cell_id": c1, "text": "new"}).status_code == 404
    thread = _threads(alice, nb)[0]["id"]
    assert alice.post(url, json={"thread_id": thread, "text": "still here"}).status_code == 201
    assert alice.post(f"/api/notebooks/{nb}/revisions/1/restore", json={}).status_code == 200
    assert [(t["cell_id"], t["cell_deleted"]) for t in _threads(alice, nb)] == [(c1, False)]


@pytest.mark.timeout(120)
def test_a_viewers_open_page_hears_of_each_change(mu_app: Flask, served_url: str) -> None:
    alice, nb, (c0, _) = _notebook(mu_app)
    vera = socket_as(served_url, "vera")
    events: list[dict[str, Any]] = []
    cond = threading.Condition()

    def on_event(ev: dict[str, Any]) -> None:
        if ev.get("type") == "comments_changed":
            with cond:
                events.append(ev)
                cond.notify_all()

    def wait(n: int) -> list[dict[str, Any]]:
        deadline = time.monotonic() + 20
        with cond:
            while len(events) < n and time.monotonic() < deadline:
                cond.wait(0.2)
            return list(events)

    vera.on("event", on_event)
    try:
        assert vera.call("command", {"type": "join", "notebook_id": nb}, timeout=30)["ok"]
        url = f"/api/notebooks/{nb}/comments"
        thread = alice.post(url, json={"cell_id": c0, "text": "secret words"}).json["id"]
        alice.patch(f"{url}/{thread}", json={"text": "other words"})
        alice.patch(f"{url}/{thread}", json={"resolved": True})
        alice.patch(f"{url}/{thread}", json={"resolved": False})
        alice.delete(f"{url}/{thread}")
        got = wait(5)
        assert [(e["action"], e["comment_id"], e["cell_id"], e["by"]) for e in got] == [
            (action, thread, c0, "alice") for action in ("created", "edited", "resolved", "reopened", "deleted")]
        assert all("words" not in str(e) for e in got)  # no text travels: each page reads with its own access
    finally:
        vera.disconnect()
