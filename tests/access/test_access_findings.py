"""The attack test's other findings (issue 11, section 3), each against a real server in login mode.

Included notebooks need the includer's read access; folder paths are case-sensitive; no open
redirect after login; a Content-Security-Policy on every page; bad input is a 4xx, never a 500;
a link never shows the server's traceback frames; the database file is private; names refuse
bidi overrides. Throttling has its own file (test_access_throttle.py).
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy.engine import make_url

from console.config import Config
from findings_support import Client, error_of, result_of
from security_support import Served, make_app

STATIC = Path(__file__).resolve().parents[2] / "console" / "server" / "static"
BIG = 2**64


def as_user(server: Served, name: str) -> Client:
    return Client(server.url).login(name)


# ---------------------------------------------------------------- include notebook.`name`

def test_include_reads_only_notebooks_the_includer_may_read(served: Served) -> None:
    alice, mallory = as_user(served, "alice"), as_user(served, "mallory")
    secret = alice.notebook("payroll", "select 'alice-secret' as v as salaries;")
    alice.notebook("tools", "select 'alice-tools' as v as tool;")
    mallory.notebook("tools", "select 'mallory-tools' as v as tool;")  # newer than alice's
    nb = mallory.notebook(
        "attack",
        "include notebook.`payroll`;\nselect v from salaries as t;",
        "include notebook.`tools`;\nselect v from tool as t;",
        "include notebook.`tools`;\nselect v from tool as t;")
    # Alice's notebook, which mallory has no role on, is not found (as over HTTP: 404).
    stolen = mallory.run(nb, 0)
    assert stolen["status"] == "error", stolen
    assert error_of(stolen)["message"] == "cannot include notebook 'payroll': no notebook named 'payroll'"
    assert "alice-secret" not in str(stolen)
    # Her own "tools" is found, not alice's older one of the same name.
    own = mallory.run(nb, 1)
    assert own["status"] == "done", own
    assert result_of(own)["rows"] == [["mallory-tools"]]
    # Once alice shares hers, the name is ambiguous: an error naming both, never a guess.
    tools = [n for n in alice.call("GET", "/api/notebooks").json["notebooks"] if n["name"] == "tools"][0]
    share = {"user": "mallory", "role": "viewer"}
    assert alice.call("POST", f"/api/notebooks/{tools['id']}/shares", share).status == 201
    both = mallory.run(nb, 2)
    assert both["status"] == "error", both
    message = error_of(both)["message"]
    assert "ambiguous" in message and tools["id"] in message and "owner alice" in message, message
    assert "owner mallory" in message
    # A viewer share is enough to include it when the name is the only one.
    assert alice.call("POST", f"/api/notebooks/{secret['id']}/shares", share).status == 201
    shared = mallory.run(nb, 0)
    assert shared["status"] == "done" and result_of(shared)["rows"] == [["alice-secret"]], shared


# ---------------------------------------------------------------- folder paths

def test_renaming_a_folder_never_moves_another_users_folder_of_other_case(served: Served) -> None:
    alice, mallory = as_user(served, "alice"), as_user(served, "mallory")
    assert mallory.call("POST", "/api/folders", {"path": "/team"}).status == 201
    theirs = alice.notebook("plans", "select 1 as a as t;", folder="/TEAM/proj")
    r = mallory.call("POST", "/api/folders/rename", {"path": "/team", "new_path": "/mine"})
    assert r.status == 200, r
    assert alice.call("GET", f"/api/notebooks/{theirs['id']}").json["folder"] == "/TEAM/proj"
    # And so mallory, owner of /mine, is no owner of alice's notebook.
    assert mallory.call("GET", f"/api/notebooks/{theirs['id']}").status == 404
    grab = {"user": "mallory", "role": "owner"}
    assert mallory.call("POST", f"/api/notebooks/{theirs['id']}/shares", grab).status == 404


def test_deleting_a_folder_never_deletes_another_users_folder_of_other_case(served: Served) -> None:
    alice, mallory = as_user(served, "alice"), as_user(served, "mallory")
    assert mallory.call("POST", "/api/folders", {"path": "/lab"}).status == 201
    theirs = alice.notebook("results", "select 1 as a as t;", folder="/LAB/x")
    mine = mallory.notebook("scratch", "select 1 as a as t;", folder="/lab")
    r = mallory.call("DELETE", "/api/folders?path=/lab&recursive=true")
    assert r.status == 200 and r.json["deleted_notebooks"] == 1, r
    assert mallory.call("GET", f"/api/notebooks/{mine['id']}").status == 404
    assert alice.call("GET", f"/api/notebooks/{theirs['id']}").status == 200


# ---------------------------------------------------------------- redirect after login

BAD_NEXT = ["%2F%09%2Fevil.example%2Fx", "%2F%0A%2Fevil.example", "%2F%0D%2Fevil.example", "//evil.example",
            "%2F%2Fevil.example", "/%5Cevil.example", "%2F%5C%2Fevil.example", "https:evil.example",
            "https://evil.example/", "javascript:alert(1)", "evil.example"]


@pytest.mark.parametrize("bad", BAD_NEXT)
def test_login_page_drops_an_off_site_next(served: Served, bad: str) -> None:
    r = Client(served.url).call("GET", f"/login?next={bad}")
    assert r.status == 302 and r.headers["Location"] in ("/login", f"{served.url}/login"), r


def test_login_page_keeps_a_same_site_next_and_login_echoes_only_safe_ones(served: Served) -> None:
    client = Client(served.url)
    assert client.call("GET", "/login?next=%2Fnotebooks%2Fabc%3Fx%3D1").status == 200
    for bad in ("/\t/evil.example/x", "/\n/evil.example", "/\r/evil.example", "//evil", "/\\evil", "https:x"):
        r = Client(served.url).call("POST", "/api/login", {"username": "alice", "password": "correct horse battery",
                                                            "next": bad})
        assert r.status == 200 and r.json["next"] == "/", (bad, r)
    r = Client(served.url).call("POST", "/api/login", {"username": "alice", "password": "correct horse battery",
                                                        "next": "/notebooks/abc?x=1"})
    assert r.json["next"] == "/notebooks/abc?x=1"


# ---------------------------------------------------------------- Content-Security-Policy

def _script_src(csp: str) -> str:
    found = re.search(r"(?:^|;)\s*script-src ([^;]*)", csp)
    assert found, csp
    return found.group(1)


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []
        self.handlers: list[str] = []
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self._open = tag == "script" and not dict(attrs).get("src")

    def handle_data(self, data: str) -> None:
        if self._open and data.strip():
            self.inline.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._open = False


def test_every_page_has_a_csp_without_inline_script(served: Served) -> None:
    anon, alice = Client(served.url), as_user(served, "alice")
    nb = alice.notebook("n", "select 1 as a as t;")
    pages = [anon.call("GET", "/login"), anon.call("GET", "/"), anon.call("GET", "/login?next=//evil"),
             alice.call("GET", "/"), alice.call("GET", f"/notebooks/{nb['id']}")]
    for page in pages:
        assert page.status in (200, 302), page
        csp = page.headers.get("Content-Security-Policy")
        assert csp, page.headers
        script = _script_src(csp)
        assert script.split() == ["'self'"], csp
        assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
        img = re.search(r"img-src ([^;]*)", csp)
        assert img and "http" not in img.group(1), csp  # no remote images unless the setting says so
    for html in STATIC.glob("*.html"):
        parser = _Scripts()
        parser.feed(html.read_text())
        assert parser.inline == [] and parser.handlers == [], html


def test_remote_markdown_images_follow_the_setting(cfg: Config) -> None:
    for allowed in (False, True):
        app = make_app(cfg, MARKDOWN_REMOTE_IMAGES=allowed, DATA_DIR=str(Path(cfg.DATA_DIR) / str(allowed)))
        server = Served(app)
        try:
            alice = as_user(server, "alice")
            assert alice.call("GET", "/api/me").json["markdown_remote_images"] is allowed
            csp = alice.call("GET", "/").headers["Content-Security-Policy"]
            img = re.search(r"img-src ([^;]*)", csp)
            assert img and (("https:" in img.group(1)) is allowed), csp
        finally:
            server.close()
            app.extensions["sessions"].shutdown()
            app.extensions["store"].close()


# ---------------------------------------------------------------- bad input: 4xx, never 500

@pytest.fixture
def small_body(cfg: Config) -> Iterator[Served]:
    app = make_app(cfg, MAX_BODY_BYTES=300_000)
    server = Served(app)
    yield server
    server.close()
    app.extensions["sessions"].shutdown()
    app.extensions["store"].close()


def test_deeply_nested_json_is_a_400(small_body: Served) -> None:
    alice = as_user(small_body, "alice")
    for raw in ("[" * 100_000 + "]" * 100_000, '{"name": ' + "[" * 100_000 + "]" * 100_000 + "}",
                '{"name": "x", "cells": ' + "[" * 100 + "]" * 100 + "}"):
        r = alice.call("POST", "/api/notebooks", raw=raw.encode())
        assert r.status == 400 and "nested deeper" in r.json["error"], r


def test_integers_beyond_64_bits_are_a_400(small_body: Served) -> None:
    alice = as_user(small_body, "alice")
    nb = alice.notebook("n", "select 1 as a as t;")
    cell = nb["cells"][0]["id"]
    run = alice.run(nb)
    base = f"/api/notebooks/{nb['id']}"
    calls = [
        ("PUT", base, {"base_revision": BIG, "cells": []}),
        ("PATCH", f"{base}/cells/{cell}", {"base_revision": BIG, "source": "x"}),
        ("POST", f"{base}/cells/{cell}/move", {"position": BIG, "base_revision": 1}),
        ("POST", f"{base}/cells/{cell}/move", {"position": 0, "base_revision": -BIG}),
        ("DELETE", f"{base}/cells/{cell}?base_revision={BIG}", None),
        ("GET", f"{base}/revisions/diff?from={BIG}", None),
        ("GET", f"{base}/revisions/diff?from=1&to={BIG}", None),
        ("GET", f"/api/runs/{run['id']}/outputs?since={BIG}", None),
        ("GET", f"/api/runs/{run['id']}/outputs?metrics_since={BIG}", None),
    ]
    for method, path, body in calls:
        r = alice.call(method, path, body)
        assert r.status == 400 and "64-bit" in r.json["error"], (method, path, r)
    # In the URL an integer too long for the store matches no route.
    for method, path in (("GET", f"{base}/revisions/{BIG}"), ("POST", f"{base}/revisions/{BIG}/restore")):
        r = alice.call(method, path, {} if method == "POST" else None)
        assert r.status == 404, (path, r)
    assert alice.call("GET", f"{base}/revisions/1").status == 200


def test_lone_surrogates_are_a_400(small_body: Served) -> None:
    alice = as_user(small_body, "alice")
    nb = alice.notebook("n", "select 1 as a as t;")
    cell = nb["cells"][0]["id"]
    base = f"/api/notebooks/{nb['id']}"
    calls = [
        ("POST", "/api/notebooks", '{"name": "bad\\ud800"}'),
        ("POST", "/api/notebooks", '{"name": "ok", "cells": [{"kind": "mlsql", "source": "select \\udfff"}]}'),
        ("PUT", base, '{"base_revision": 1, "cells": [{"kind": "mlsql", "source": "\\ud800"}]}'),
        ("PATCH", f"{base}/cells/{cell}", '{"base_revision": 1, "source": "x\\ud800"}'),
        ("POST", f"{base}/rename", '{"name": "\\ud800"}'),
        ("POST", "/api/folders", '{"path": "/a\\ud800"}'),
        ("POST", "/api/notebooks/import", '{"format": "mlsql-console-notebook", "version": 1, "name": "\\ud800", '
                                          '"cells": []}'),
    ]
    for method, path, raw in calls:
        r = alice.call(method, path, raw=raw.encode())
        assert r.status == 400, (path, raw, r)
    assert alice.call("GET", base).json["cells"][0]["source"] == "select 1 as a as t;"


def test_a_chunked_body_over_the_limit_is_a_413(small_body: Served) -> None:
    alice = as_user(small_body, "alice")

    def chunks() -> Iterator[bytes]:
        yield b'{"name": "'
        for _ in range(400):
            yield b"x" * 1000
        yield b'"}'

    r = alice.call("POST", "/api/notebooks", raw=chunks())
    assert r.status == 413, r
    small = alice.call("POST", "/api/notebooks", raw=iter([b'{"name": ', b'"chunked"}']))
    assert small.status == 201 and small.json["name"] == "chunked", small


# ---------------------------------------------------------------- links show no server frames

FRAMES = '''Traceback (most recent call last):
  File "<cell>", line 2, in <module>
    model.fit(x)
  File "/opt/console/console/actors/data.py", line 88, in fit
    return self._read(part)
           ^^^^^^^^^^^^^^^^
  File "/usr/lib/python3/dist-packages/ray/_private/worker.py", line 2771, in get
    raise value.as_instanceof_cause()
ValueError: the user's own message
'''


def test_a_link_shows_the_message_and_the_cells_frames_only(served: Served) -> None:
    alice = as_user(served, "alice")
    nb = alice.notebook("failing", ("python", "import json\njson.loads('{')"), "select 1 as a as t;")
    real = alice.run(nb, 0)
    assert real["status"] == "error" and 'File "/' in error_of(real)["traceback"], real  # the owner sees it all
    link = alice.call("POST", f"/api/notebooks/{nb['id']}/links").json
    shown = Client(served.url).call("GET", f"/api/links/{link['token']}")
    assert shown.status == 200, shown
    error = shown.json["cells"][0]["last_run"]["error"]
    assert "JSONDecodeError" in error["message"]
    assert 'File "<cell>", line 2' in error["traceback"] and "json.loads('{')" in error["traceback"]
    assert 'File "/' not in shown.text and "python3" not in error["traceback"], error


def test_a_link_leaves_out_frames_of_the_products_code(mu_app: Flask, served: Served) -> None:
    alice = as_user(served, "alice")
    nb = alice.notebook("stored", ("python", "x = 1\nmodel.fit(x)"))
    # Stored as a kernel stores a failed run, its traceback holding frames of the product's code.
    store = mu_app.extensions["store"]
    run = store.create_run(nb["id"], nb["cells"][0]["id"], "x = 1\nmodel.fit(x)")
    store.finish_run(run.id, "error", error={"type": "error", "kind": "python", "line": 2, "column": None,
                                             "message": "ValueError: the user's own message", "traceback": FRAMES})
    link = alice.call("POST", f"/api/notebooks/{nb['id']}/links").json
    shown = Client(served.url).call("GET", f"/api/links/{link['token']}")
    error = shown.json["cells"][0]["last_run"]["error"]
    assert error["message"] == "ValueError: the user's own message"
    assert error["traceback"].splitlines() == [
        "Traceback (most recent call last):", '  File "<cell>", line 2, in <module>', "    model.fit(x)",
        "  (2 frames of library code left out)", "ValueError: the user's own message"]
    page = Client(served.url).call("GET", f"/p/{link['token']}")
    assert page.status == 200 and "actors/data.py" not in page.text and "ray/_private" not in page.text


# ---------------------------------------------------------------- file modes and names

def test_the_database_file_is_private(mu_app: Flask, cfg: Config) -> None:
    path = Path(make_url(mu_app.extensions["config"].database_url).database or "")
    assert path.is_file()
    assert os.stat(path).st_mode & 0o777 == 0o600, oct(os.stat(path).st_mode)


BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]


@pytest.mark.parametrize("char", BIDI)
def test_names_refuse_bidi_overrides(served: Served, char: str) -> None:
    alice = as_user(served, "alice")
    assert alice.call("POST", "/api/notebooks", {"name": f"report{char}fdp.exe"}).status == 400
    assert alice.call("POST", "/api/notebooks", {"name": "ok", "folder": f"/a{char}b"}).status == 400
    assert alice.call("POST", "/api/folders", {"path": f"/team/x{char}"}).status == 400
    nb = alice.notebook("fine")
    assert alice.call("POST", f"/api/notebooks/{nb['id']}/rename", {"name": f"x{char}"}).status == 400
    assert alice.call("POST", f"/api/notebooks/{nb['id']}/move", {"folder": f"/{char}"}).status == 400
    r = alice.call("POST", "/api/notebooks/import",
                   {"format": "mlsql-console-notebook", "version": 1, "name": f"evil{char}", "cells": []})
    assert r.status == 400, r


def test_a_socket_join_with_a_since_beyond_64_bits_is_refused(served: Served) -> None:
    from security_support import socket_as

    alice = as_user(served, "alice")
    nb = alice.notebook("n", "select 1 as a as t;")
    run = alice.run(nb)
    sio = socket_as(served.url, "alice")
    try:
        for field in ("since", "metrics_since"):
            ack = sio.call("command", {"type": "join", "notebook_id": nb["id"], field: {run["id"]: BIG}}, timeout=30)
            assert ack["ok"] is False and ack["status"] == 400 and "must be an integer within" in ack["error"], ack
        ack = sio.call("command", {"type": "join", "notebook_id": nb["id"], "since": {run["id"]: 1}}, timeout=30)
        assert ack["ok"], ack
    finally:
        sio.disconnect()
